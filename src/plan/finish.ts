/**
 * The plan's assembly, the same for every mode: the decided rows (decisions.ts) become the
 * result index, its stat data, and the lists the executor works through.
 */
import type { NativeOdb } from '../addon.js';
import type { EntryList } from './entries.js';
import { locateFiles } from './locate.js';
import type { KeptStats, Plan } from './plan.js';
import { KIND_DIR } from './probe.js';
import { dirsOf, gatherEntries } from './rows.js';
import { SKIP_WORKTREE, ancestors, type Planned, type Stage } from './stage.js';
import { MODE_GITLINK, MODE_SYMLINK } from './tree.js';

/** The Plan of the decided rows (a straight line of steps, hence its length). */
export function finishPlan(odb: NativeOdb, s: Stage, planned: Planned): Plan {
  const { decisions: d, dirsLooked } = planned;
  const { n, deletes, clears } = d;
  const { found } = s;
  const result = gatherEntries(d.src.subarray(0, n), d.idx.subarray(0, n), s.I, s.M);
  const writeFlags = d.write.slice(0, n);
  const replace = d.replace.slice(0, n);
  // Kept entries keep their stat data (zeroed size where smudged), those hashed clean take the
  // probe's, new and written ones have none yet: gathered by the write phase (Plan.keptStats).
  const keptStats: KeptStats = {
    src: d.src.subarray(0, n),
    idx: d.idx.subarray(0, n),
    freshSlot: d.freshSlot.subarray(0, n),
    smudge: d.smudge.subarray(0, n),
    old: s.index?.stats ?? new Uint32Array(0),
    fresh: found.stats,
  };

  const extFlags = new Uint16Array(n);
  extFlags.set(d.ext.subarray(0, n));
  const fileIdx: number[] = [];
  const symlinks: number[] = [];
  const gitlinks: number[] = [];
  for (let k = writeFlags.indexOf(1); k >= 0; k = writeFlags.indexOf(1, k + 1)) {
    const mode = result.modes[k]!;
    if (mode === MODE_SYMLINK) symlinks.push(k);
    else if (mode === MODE_GITLINK) gitlinks.push(k);
    else fileIdx.push(k);
  }
  const check = s.input.check;
  const { files, missing } = locateFiles(odb, result, fileIdx, check);
  // Links are written last, but their targets are looked up now, with the files' blobs: a
  // missing one is known (fetched, or failing the checkout) before anything is written.
  const links = locateFiles(odb, result, symlinks, check);
  check?.();
  let fileBytes = 0;
  for (const f of files) fileBytes += f.size;
  const rmdirs = emptiedDirs(deletes, result, extFlags);
  // A switch looked at the directories of its new and changed entries: those found to be real
  // directories, and not removed before the writes, are not made again (an mkdir that fails
  // with EEXIST and an lstat each: ~700 of them in a 1% switch of the Linux tree).
  const goneFirst = new Set([
    ...clears,
    ...rmdirs,
    ...deletes.filter((del) => del.dir).map((del) => del.path),
  ]);
  const stays = (dir: string): boolean => {
    for (let p = dir; ; p = p.slice(0, p.lastIndexOf('/'))) {
      if (goneFirst.has(p)) return false;
      if (!p.includes('/')) return true;
    }
  };
  const dirs = dirsOf(result, writeFlags).filter((dir) => {
    const slot = dirsLooked?.get(dir);
    return slot === undefined || found.kind(slot) !== KIND_DIR || !stays(dir);
  });
  return {
    mode: s.mode,
    result,
    keptStats,
    extFlags,
    write: writeFlags,
    replace,
    files,
    missing: [...missing, ...links.missing],
    symlinks,
    gitlinks,
    dirs,
    deletes,
    rmdirs,
    clears,
    replaceInTheWay: planned.replaceInTheWay,
    fileBytes,
    counts: { created: d.created, updated: d.updated, deleted: d.removed },
    verified: planned.verified ? d.verified.slice(0, n) : null,
  };
}

/** Parents of removed entries that the result no longer needs, deepest first. */
function emptiedDirs(
  deletes: { path: string }[],
  result: EntryList,
  extFlags: Uint16Array,
): string[] {
  const out = new Set<string>();
  for (const { path } of deletes) {
    for (const d of ancestors(path)) {
      if (out.has(d) || holdsEntries(result, d, extFlags)) break;
      out.add(d);
    }
  }
  return [...out].sort((a, b) => b.split('/').length - a.split('/').length || (a < b ? 1 : -1));
}

/** Whether some entry of the sorted list with a file lies under directory `dir` (latin1). */
function holdsEntries(list: EntryList, dir: string, extFlags: Uint16Array): boolean {
  const prefix = Buffer.from(`${dir}/`, 'latin1');
  let lo = 0;
  let hi = list.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = list.paths.compare(
      prefix,
      0,
      prefix.length,
      list.starts[mid]!,
      list.starts[mid + 1]! - 1,
    );
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  // The entries under it follow one another; skip-worktree ones have no file there.
  for (let k = lo; k < list.count; k++) {
    const start = list.starts[k]!;
    const inside =
      list.starts[k + 1]! - 1 - start >= prefix.length &&
      list.paths.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0;
    if (!inside) return false;
    if ((extFlags[k]! & SKIP_WORKTREE) === 0) return true;
  }
  return false;
}
