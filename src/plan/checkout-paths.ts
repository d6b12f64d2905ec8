/**
 * The checkout of paths: `git checkout <rev> -- <pathspec>`. The entries the pathspec matches
 * in the target are set from it, local changes in them overwritten (oneWayMerge); nothing else
 * is touched and nothing is removed (git's overlay mode: entries the target lacks stay).
 */
import { Decisions } from './decisions.js';
import type { EntryList } from './entries.js';
import { worktreeScope } from './filters.js';
import { cleanForOneWay, indexSide, lookOneWay, oneWayMerge, type IndexSide } from './oneway.js';
import { ancestors, type Planned, type Planner, type Stage } from './stage.js';

/**
 * One path of a checkout of paths: the one-way merge, except that an entry the target lacks
 * stays ('keep', overlay) and that a path whose file git's second pass skips (`writesFile`
 * false, see worktreeScope) takes M into the index only ('index only'), its file untouched.
 */
export function overlayMerge(
  I: IndexSide,
  M: boolean,
  sameIM: boolean,
  clean: boolean,
  writesFile: boolean,
): 'keep' | 'use M' | 'index only' | 'none' {
  if (M && !writesFile) return I === 'merged' && sameIM ? 'keep' : 'index only';
  const result = oneWayMerge(I, M, sameIM, clean);
  return result === 'remove' ? 'keep' : result;
}

export const checkoutPathsPlanner: Planner = {
  joins: { head: false, target: true, pathspecFrom: 'target' },
  mergedOnly: true,
  plan: planPaths,
};

async function planPaths(s: Stage): Promise<Planned> {
  const files = worktreeScope(s.input.pathspec, s.scoped, (r) => s.latin1(r));
  lookOneWay(s);
  await s.look(false);
  const d = new Decisions(s, { inCone: s.inCone, reset: false, smudgeRacy: false });
  const { rows } = s;
  for (let r = 0; r < rows.count; r++) {
    if (s.scoped[r] === 0) {
      if (rows.i[r]! >= 0) d.keep(r); // outside the pathspec: untouched
      continue;
    }
    const m = rows.m[r]!;
    const writesFile = files === null || files[r] === 1;
    switch (overlayMerge(indexSide(s, r), m >= 0, s.sameIM(r), cleanForOneWay(s, r), writesFile)) {
      case 'keep':
        d.keep(r);
        break;
      case 'use M':
        d.writeEntry(r, false, m, false);
        break;
      case 'index only':
        d.indexOnly(m);
        break;
      case 'none':
    }
  }
  // Entries added next to kept ones: one that is now a directory, or that a new file replaces
  // with its directory, leaves the index (git replaces it).
  d.n = dropShadowed(d, s.I, s.M);
  return { decisions: d, verified: false, replaceInTheWay: true, dirsLooked: null };
}

/**
 * Removes kept index entries that a written entry shadows (a file `a` kept while `a/x` is
 * written, or `a/x` kept while a file `a` is written), compacting the result arrays in place.
 * Returns the new count.
 */
function dropShadowed(d: Decisions, I: EntryList | null, M: EntryList | null): number {
  const { n, src, idx, write, replace, ext, freshSlot, smudge } = d;
  const name = (k: number): string => (src[k] === 0 ? I! : M!).name(idx[k]!);
  const writtenFiles = new Set<string>();
  const writtenDirs = new Set<string>();
  for (let k = 0; k < n; k++) {
    if (write[k] !== 1) continue;
    const path = name(k);
    writtenFiles.add(path);
    for (const dir of ancestors(path)) {
      if (writtenDirs.has(dir)) break;
      writtenDirs.add(dir);
    }
  }
  let out = 0;
  for (let k = 0; k < n; k++) {
    if (write[k] !== 1) {
      const path = name(k);
      let shadowed = writtenDirs.has(path);
      for (const dir of ancestors(path)) if (writtenFiles.has(dir)) shadowed = true;
      if (shadowed) continue;
    }
    src[out] = src[k]!;
    idx[out] = idx[k]!;
    write[out] = write[k]!;
    replace[out] = replace[k]!;
    ext[out] = ext[k]!;
    freshSlot[out] = freshSlot[k]!;
    smudge[out] = smudge[k]!;
    out++;
  }
  return out;
}
