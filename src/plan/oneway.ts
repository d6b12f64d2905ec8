/**
 * The forced checkout: git's one-way merge with reset (`git checkout -f <rev>`, `git read-tree
 * --reset -u $M`): the target wins, local changes in tracked files are overwritten, entries
 * the target lacks are removed. Its decision (oneWayMerge) is shared with the checkout of paths
 * (checkout-paths.ts), which overlays instead of removing.
 */
import { Decisions } from './decisions.js';
import type { Planned, Planner, Stage } from './stage.js';

/** An index entry as a one-way merge sees it: absent, a stage-0 entry, or conflict stages. */
export type IndexSide = 'none' | 'merged' | 'unmerged';

/**
 * git's one-way merge of one path (oneway_merge, with reset): I the index's entry, `M` whether
 * the target has the path, `sameIM` whether they are the same (mode and id), `clean` whether
 * the worktree matches I (or I is skip-worktree: never looked at).
 * - 'keep':   I stays as it is, its file untouched (the same as M, and clean);
 * - 'use M':  M's entry is written (over a local change: the target wins);
 * - 'remove': the target lacks the path: I and its file go (an unmerged one too);
 * - 'none':   neither has it.
 */
export function oneWayMerge(
  I: IndexSide,
  M: boolean,
  sameIM: boolean,
  clean: boolean,
): 'keep' | 'use M' | 'remove' | 'none' {
  if (M) return I === 'merged' && sameIM && clean ? 'keep' : 'use M';
  return I === 'none' ? 'none' : 'remove';
}

/** Row r's index side (see IndexSide). */
export function indexSide(s: Stage, r: number): IndexSide {
  if (s.rows.i[r]! < 0) return 'none';
  return s.merged(r) ? 'merged' : 'unmerged';
}

/** Whether row r's entry counts as clean for oneWayMerge (see there). */
export function cleanForOneWay(s: Stage, r: number): boolean {
  const i = s.rows.i[r]!;
  return i >= 0 && (s.cleanAt(r) || s.skipWorktree(i));
}

/**
 * The rows a one-way merge looks at: a checked-out entry is compared with its file, unless it
 * is known clean and kept as it is (written or removed: looked at); any other path is looked
 * at for what is in the way.
 */
export function lookOneWay(s: Stage): void {
  const { rows } = s;
  for (let r = 0; r < rows.count; r++) {
    if (s.scoped[r] === 0) continue;
    const i = rows.i[r]!;
    if (i >= 0 && s.merged(r) && !s.skipWorktree(i)) {
      // Leaving the cone: the file goes if it is clean (and is compared even when known).
      const kept = s.known(i) && rows.m[r]! >= 0 && s.sameIM(r);
      if (s.outOfCone(r) || !kept) s.compareRow(r);
    } else s.lookRow(r);
  }
}

export const forcePlanner: Planner = {
  joins: { head: false, target: true, pathspecFrom: 'index' },
  mergedOnly: false,
  plan: planForce,
};

async function planForce(s: Stage): Promise<Planned> {
  lookOneWay(s);
  await s.look(false);
  const d = new Decisions(s, { inCone: s.inCone, reset: true, smudgeRacy: false });
  const { rows } = s;
  for (let r = 0; r < rows.count; r++) {
    if (s.scoped[r] === 0) {
      if (rows.i[r]! >= 0) d.keep(r); // outside the pathspec: untouched
      continue;
    }
    switch (oneWayMerge(indexSide(s, r), rows.m[r]! >= 0, s.sameIM(r), cleanForOneWay(s, r))) {
      case 'keep':
        d.keep(r);
        break;
      case 'use M':
        d.writeEntry(r, false, rows.m[r]!, false);
        break;
      case 'remove':
        d.remove(r);
        break;
      case 'none':
    }
  }
  return { decisions: d, verified: true, replaceInTheWay: true, dirsLooked: null };
}
