/**
 * The switch: git's two-way merge (`git checkout <rev>`, `git read-tree -m -u $H $M`) of the
 * index and worktree from HEAD's tree (H) to the target (M). It refuses to overwrite local
 * changes or untracked files: git-read-tree(1), "Two Tree Merge", is the table twoWayMerge
 * follows, case by case.
 */
import { STAT_WORDS } from '../index/write.js';
import { display } from './conflicts.js';
import { Decisions } from './decisions.js';
import type { EntryList } from './entries.js';
import type { PlanInput } from './plan.js';
import { KIND_ABSENT, KIND_DIR } from './probe.js';
import { SAME_HM, SAME_IH, SAME_IM, rowsToDecide } from './rows.js';
import { ancestors, type Planned, type Planner, type Stage } from './stage.js';

/** One row of git's table: its number, and what it does with the path. */
export interface TwoWayCase {
  readonly case: number;
  /**
   * 'keep': the index entry stays (nothing, where there is none); 'use M': the target's is
   * written; 'remove': the path leaves the index and the worktree; 'fail': refused.
   */
  readonly result: 'keep' | 'use M' | 'remove' | 'fail';
}

const row = (n: number, result: TwoWayCase['result']): TwoWayCase =>
  Object.freeze({ case: n, result });
// prettier-ignore
const CASES: readonly TwoWayCase[] = [
  row(0, 'keep'), row(1, 'use M'), row(2, 'remove'), row(3, 'keep'),
  row(4, 'keep'), row(5, 'keep'), row(6, 'keep'), row(7, 'keep'), row(8, 'fail'), row(9, 'fail'),
  row(10, 'remove'), row(11, 'fail'), row(12, 'fail'), row(13, 'fail'),
  row(14, 'keep'), row(15, 'keep'),
  row(16, 'fail'), row(17, 'fail'), row(18, 'keep'), row(19, 'keep'), row(20, 'use M'), row(21, 'fail'),
];
/**
 * Case 3, a staged removal: kept where H == M (CASES[3]), refused where they differ; "use M if
 * initial checkout" (no index: git's twoway_merge then takes M whether or not H == M).
 */
const CASE_3_INITIAL = row(3, 'use M');
const CASE_3_FAIL = row(3, 'fail');

/**
 * git's two-way merge of one path, by the table of git-read-tree(1): whether the index (I),
 * HEAD's tree (H) and the target (M) have it, which of them are the same (`same`: the rows'
 * SAME_* bits), and whether the worktree is `clean` (the index entry up to date, or
 * skip-worktree: git never looks at those; unused without an index entry). `initial`: there is
 * no index at all (case 3's "initial checkout"). Allocates nothing: a switch calls it per row.
 */
export function twoWayMerge(
  I: boolean,
  H: boolean,
  M: boolean,
  same: number,
  clean: boolean,
  initial: boolean,
): TwoWayCase {
  const c = clean ? 0 : 1; // each case with an index entry comes as clean, then not clean
  if (!I) {
    if (!H) return CASES[M ? 1 : 0]!;
    if (!M) return CASES[2]!;
    if (initial) return CASE_3_INITIAL;
    return (same & SAME_HM) !== 0 ? CASES[3]! : CASE_3_FAIL;
  }
  if (!H && !M) return CASES[4 + c]!;
  if (!H) return CASES[((same & SAME_IM) !== 0 ? 6 : 8) + c]!;
  if (!M) return CASES[((same & SAME_IH) !== 0 ? 10 : 12) + c]!;
  if ((same & SAME_HM) !== 0) return CASES[14 + c]!;
  if ((same & SAME_IM) !== 0) return CASES[18 + c]!;
  if ((same & SAME_IH) !== 0) return CASES[20 + c]!;
  return CASES[16 + c]!;
}

/**
 * Whether the worktree decides a path's case: with an index entry, where the result depends on
 * its being clean (cases 10/11 and 20/21, an entry to be replaced or removed); without one,
 * where the merge adds or removes the path (git's verify_absent looks for an untracked file).
 */
export function twoWayLooks(
  I: boolean,
  H: boolean,
  M: boolean,
  same: number,
  initial: boolean,
): boolean {
  if (!I) {
    const { result } = twoWayMerge(false, H, M, same, false, initial);
    return result === 'use M' || result === 'remove';
  }
  return (
    twoWayMerge(true, H, M, same, true, initial).result !==
    twoWayMerge(true, H, M, same, false, initial).result
  );
}

export const switchPlanner: Planner = {
  joins: { head: true, target: true, pathspecFrom: 'index' },
  mergedOnly: true,
  plan: planSwitch,
};

async function planSwitch(s: Stage): Promise<Planned> {
  const { index, rows, input } = s;
  const initial = index === null;
  // The bulk of a switch: rows whose index entry, HEAD's and the target's are the same and not
  // racy are kept without a look (cases 14 and 15). Where nothing else can apply (no pathspec,
  // no cone) the loops visit only the other rows (listed natively), and the plain ones between
  // them are kept in bulk: a one-shot process runs a loop over 78,000 rows in V8's
  // interpreter, a few ms each.
  const toDecide =
    index !== null && input.pathspec === null && s.inCone === null
      ? rowsToDecide(rows, index.stats, s.racySeconds)
      : null;
  const visits = toDecide ? toDecide.length : rows.count;
  const rowAt = (k: number): number => (toDecide ? toDecide[k]! : k);
  lookAtRows(s, visits, rowAt, initial);
  const dirs = lookAtDirs(s, visits, rowAt);
  await s.look(true);

  const d = new Decisions(s, { inCone: s.inCone, reset: false, smudgeRacy: true });
  let plainFrom = 0;
  for (let k = 0; k < visits; k++) {
    const r = rowAt(k);
    if (toDecide) {
      d.keepRun(plainFrom, r);
      plainFrom = r + 1;
    }
    if (s.scoped[r] === 0) {
      if (rows.i[r]! >= 0) d.keep(r); // outside the pathspec: untouched
    } else decideRow(s, d, r, initial);
  }
  if (toDecide) d.keepRun(plainFrom, rows.count);

  inTheWay(s, d, dirs);
  if (d.conflicts.count > 0) throw d.conflicts.error();
  // Entries neither written nor looked at are known only where a warm engine's watch vouched
  // for them (Decisions carries that per entry); with no watch nothing is recorded.
  return {
    decisions: d,
    verified: s.knownClean !== null,
    replaceInTheWay: false,
    dirsLooked: dirs.slots,
  };
}

/** The rows whose worktree a switch looks at (see twoWayLooks; racy entries, leaving the cone). */
function lookAtRows(
  s: Stage,
  visits: number,
  rowAt: (k: number) => number,
  initial: boolean,
): void {
  const { rows, index } = s;
  for (let k = 0; k < visits; k++) {
    const r = rowAt(k);
    if (s.scoped[r] === 0) continue;
    const i = rows.i[r]!;
    if (i >= 0 && s.merged(r) && !s.skipWorktree(i) && s.outOfCone(r)) {
      s.compareRow(r); // leaving the cone: the file goes if it is clean
    } else if (i >= 0) {
      // Also where a kept entry's stat data is racy: git checks those before it writes the
      // new index. An entry a warm engine's watch vouches for (the worktree matched it, no
      // event since) is clean without a look: a switch to and fro then looks at none of the
      // files the last one wrote.
      const racy = s.racySeconds > 0 && index!.stats[i * STAT_WORDS + 2]! >= s.racySeconds;
      const looks = twoWayLooks(true, rows.h[r]! >= 0, rows.m[r]! >= 0, rows.same[r]!, initial);
      if ((looks || racy) && !s.skipWorktree(i) && !s.knownFile(i)) s.compareRow(r);
    } else if (twoWayLooks(false, rows.h[r]! >= 0, rows.m[r]! >= 0, rows.same[r]!, initial)) {
      s.lookRow(r); // a new path, or one git would remove from under an untracked file
    }
  }
}

/**
 * Directories of a switch's new and changed entries, looked at: something untracked may be
 * where they go — a file, or a symlink to elsewhere where a tracked directory was (never
 * written through). `fresh`: those a path new to the index needs (git's verify_absent).
 */
function lookAtDirs(s: Stage, visits: number, rowAt: (k: number) => number) {
  const slots = new Map<string, number>();
  const fresh = new Set<string>();
  const { M, rows } = s;
  if (!M) return { slots, fresh };
  for (let k = 0; k < visits; k++) {
    const r = rowAt(k);
    const m = rows.m[r]!;
    if (m < 0 || (rows.same[r]! & SAME_IM) !== 0) continue; // (SAME_IM: the index has it)
    if (s.outOfCone(r)) continue; // never written: nothing in the way
    const i = rows.i[r]!;
    for (const dir of ancestors(M.name(m))) {
      // A directory seen (as new, when this entry is) has its parents seen the same way.
      if (slots.has(dir) && (i >= 0 || fresh.has(dir))) break;
      if (i < 0) fresh.add(dir);
      if (!slots.has(dir)) slots.set(dir, s.lookPath(dir));
    }
  }
  return { slots, fresh };
}

/** One row of a switch, decided by twoWayMerge. */
function decideRow(s: Stage, d: Decisions, r: number, initial: boolean): void {
  const { rows } = s;
  const i = rows.i[r]!;
  const h = rows.h[r]!;
  const m = rows.m[r]!;
  const clean = i >= 0 && (s.uptodate(r) || s.skipWorktree(i));
  switch (twoWayMerge(i >= 0, h >= 0, m >= 0, rows.same[r]!, clean, initial).result) {
    case 'keep':
      if (i >= 0) d.keep(r);
      break;
    case 'remove':
      if (i >= 0) d.remove(r);
      else untrackedInTheWay(s, d, r, s.H!.name(h), false);
      break;
    case 'use M':
      // Outside the cone nothing is written: git's verify_absent does not look there.
      if (i < 0 && !s.outOfCone(r)) untrackedInTheWay(s, d, r, s.M!.name(m), true);
      d.writeEntry(r, false, m, true);
      break;
    case 'fail': {
      // A clean entry the target removes, with a directory in its place holding untracked
      // files: git's deleted_entry checks the directory first (verify_absent_if_directory),
      // so it is reported as one that would lose them.
      const path = s.latin1(r);
      if (
        m < 0 &&
        h >= 0 &&
        (rows.same[r]! & SAME_IH) !== 0 &&
        s.kindAt(r) === KIND_DIR &&
        untrackedInside(s.input.listDir, path, s.I, s.input.isIgnored)
      ) {
        d.conflicts.dirsLosingUntracked.push(display(path));
        break;
      }
      // Local changes the switch would lose (or staged changes, or a staged removal of a
      // path the target changes).
      d.conflicts.localChanges.push(display(path));
    }
  }
}

/**
 * git's verify_absent for a path the index lacks: an untracked file there (not a directory:
 * checked with its contents, see inTheWay, or left) refuses the switch; an ignored one is
 * removed where a new entry is written (`overwritten`), left where one is removed.
 */
function untrackedInTheWay(
  s: Stage,
  d: Decisions,
  r: number,
  path: string,
  overwritten: boolean,
): void {
  const kind = s.kindAt(r);
  if (kind === KIND_ABSENT || kind === KIND_DIR) return;
  if (s.input.isIgnored(path, false)) {
    if (overwritten) d.clears.push(path);
    return;
  }
  const list = overwritten ? d.conflicts.untrackedOverwritten : d.conflicts.untrackedRemoved;
  list.push(display(path));
}

/** Things in the way of new directories, and directories in the way of new files. */
function inTheWay(
  s: Stage,
  d: Decisions,
  dirs: { slots: Map<string, number>; fresh: Set<string> },
): void {
  const { I, input } = s;
  const { conflicts, clears } = d;
  for (const [dir, slot] of dirs.slots) {
    const kind = s.found.kind(slot);
    if (kind === KIND_ABSENT || kind === KIND_DIR) continue;
    const at = I ? findPath(I, dir) : -1;
    if (at >= 0 && d.fate[at] === 1) continue; // a tracked file the switch removes first
    if (at >= 0) conflicts.localChanges.push(display(dir));
    else if (input.isIgnored(dir, false)) clears.push(dir);
    else if (dirs.fresh.has(dir)) conflicts.untrackedOverwritten.push(display(dir));
    else clears.push(dir); // as git's checkout does where only changed entries need the directory
  }
  for (const { path } of d.dirsInTheWay) {
    const lost = untrackedInside(input.listDir, path, I, input.isIgnored);
    if (lost) conflicts.dirsLosingUntracked.push(display(path));
    else clears.push(path);
  }
}

/**
 * Whether a directory that must give way to a file holds anything that is neither tracked nor
 * ignored (git: "would lose untracked files").
 */
function untrackedInside(
  listDir: PlanInput['listDir'],
  dir: string,
  index: EntryList | null,
  isIgnored: (path: string, isDir: boolean) => boolean,
): boolean {
  if (isIgnored(dir, true)) return false;
  const names = listDir(dir);
  if (names === null) return false;
  for (const ent of names) {
    const path = `${dir}/${ent.name}`;
    if (ent.dir) {
      if (untrackedInside(listDir, path, index, isIgnored)) return true;
      continue;
    }
    // Tracked files are decided (and reported) by their own rows.
    if (index && findPath(index, path) >= 0) continue;
    if (!isIgnored(path, false)) return true;
  }
  return false;
}

/** Position of a latin1 path in a sorted list, or -1. */
function findPath(list: EntryList, path: string): number {
  const key = Buffer.from(path, 'latin1');
  let lo = 0;
  let hi = list.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = list.paths.compare(key, 0, key.length, list.starts[mid]!, list.starts[mid + 1]! - 1);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
