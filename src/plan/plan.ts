/**
 * The planner: the current index, the worktree and the target tree in, one plan of actions
 * out. Every mode produces the same Plan and one executor consumes it; a fresh checkout is the
 * plan against an empty index.
 *
 * - fresh:   no index, an empty worktree: create everything, look at nothing.
 * - switch:  git's two-way merge (`git checkout <rev>`) of index and worktree from HEAD's tree
 *            to the target; refuses to overwrite local changes or untracked files.
 * - force:   git's one-way merge with reset (`git checkout -f <rev>`): the target wins.
 * - restore: the worktree made to match the index (`git checkout-index -a -f`).
 * - paths:   `git checkout <rev> -- <pathspec>`: the matching entries set from the target,
 *            local changes in them overwritten, nothing else touched, nothing removed.
 *
 * A pathspec limits restore and paths to the entries it matches; a cone-mode sparse
 * checkout marks the entries outside the cone skip-worktree and keeps their files away.
 */
import type { NativeOdb } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import { Conflicts, assertMerged, display } from './conflicts.js';
import { STAT_WORDS, bytesOf } from '../index/write.js';
import { EntryList } from './entries.js';
import { locateFiles, type FileTask } from './locate.js';
import { EMPTY_PROBE, ProbeList } from './probe-list.js';
import {
  KIND_ABSENT,
  KIND_DIR,
  KIND_ERROR,
  KIND_FILE,
  KIND_SYMLINK,
  type ProbeRequest,
  type ProbeResult,
} from './probe.js';
import {
  SAME_HM,
  SAME_IH,
  SAME_IM,
  gatherEntries,
  gatherStats,
  dirsOf,
  joinRows,
  rowsToDecide,
} from './rows.js';
import { MODE_GITLINK, MODE_SYMLINK } from './tree.js';

export type Mode = 'fresh' | 'switch' | 'force' | 'restore' | 'paths';

/** The parts of a read index the planner uses. */
export interface CurrentIndex {
  entries: EntryList;
  stats: Uint32Array;
  stages: Uint8Array;
  extFlags: Uint16Array;
  mtime: { sec: number; nsec: number };
}

export interface PlanInput {
  mode: Mode;
  root: string;
  /** M: the tree to check out (for restore: unused, the index is the target). */
  target: EntryList | null;
  /** I: null when there is no index file. */
  index: CurrentIndex | null;
  /** H: the tree HEAD points at (switch only). */
  head: EntryList | null;
  /** core.filemode */
  fileMode: boolean;
  /** core.symlinks (default true) */
  symlinks?: boolean;
  /** Threads the worktree's lstat batch may use above the threshold (else one). */
  probeThreads: number;
  threshold: number;
  isIgnored: (path: string, isDir: boolean) => boolean;
  /** Limits restore and paths modes to the entries it selects (latin1 paths). */
  pathspec: {
    matches(path: string): boolean;
    assertAllMatched(): void;
    worktreeMatcher(): (path: string) => boolean;
  } | null;
  /** Cone-mode sparse checkout: whether a path is inside the cone; null when off. */
  inCone: ((path: string) => boolean) | null;
  /** Runs a worktree probe, in process or split across the pool. */
  probe: (req: ProbeRequest) => Promise<ProbeResult>;
  /**
   * Per index entry, 1 where the worktree is known to match it without looking (a warm
   * engine's watch saw no change since it was checked; see watch.ts): a restore or forced
   * checkout keeps it unprobed. Null or absent: nothing is known.
   */
  knownClean?: Uint8Array | null;
  /** The entries of a worktree directory (latin1 names), or null when it cannot be read. */
  listDir: (dir: string) => { name: string; dir: boolean }[] | null;
}

export interface Plan {
  mode: Mode;
  /** The index to write, in order. */
  result: EntryList;
  /** STAT_WORDS per result entry: the kept entries' stat data (written ones are filled later). */
  stats: Uint32Array;
  /** The extended flags carried over from the old index (skip-worktree, intent-to-add). */
  extFlags: Uint16Array;
  /** Per result entry: 1 when this checkout writes it. */
  write: Uint8Array;
  /** Per result entry: 1 when a file or symlink at its path must be unlinked first. */
  replace: Uint8Array;
  /** Regular files to write (result positions) in pack order. */
  files: FileTask[];
  symlinks: number[];
  /** Gitlinks to record; their (empty) directory is made unless one is there. */
  gitlinks: number[];
  /** Directories to make, parents first (latin1 names, see EntryList.name). */
  dirs: string[];
  /** Worktree entries of the old index to remove: files and symlinks, or gitlink directories. */
  deletes: { path: string; dir: boolean }[];
  /** Directories that removals may leave empty, deepest first: removed when empty. */
  rmdirs: string[];
  /** Untracked or ignored things in the way of the target, removed (recursively) first. */
  clears: string[];
  /** mkdir may replace a file or symlink in the way (forced). */
  replaceInTheWay: boolean;
  /** Sum of the inflated sizes of the regular files to write. */
  fileBytes: number;
  /** Worktree entries made where nothing was, rewritten, and index entries removed. */
  counts: { created: number; updated: number; deleted: number };
  /**
   * Per result entry, 1 where the worktree matches it once the plan is carried out (it is
   * written, or was found or known clean); null for modes that do not look at every entry
   * (a switch, a checkout of paths). What a warm engine's watch records.
   */
  verified: Uint8Array | null;
}

const SKIP_WORKTREE = 0x4000;
const INTENT_TO_ADD = 0x2000;

/** Parent directories of a latin1 path, nearest first. */
function* ancestors(path: string): Generator<string> {
  for (let s = path.lastIndexOf('/'); s > 0; s = path.lastIndexOf('/', s - 1))
    yield path.slice(0, s);
}

/** Decides every path, probing the worktree where the decision depends on it. */
export async function makePlan(odb: NativeOdb, input: PlanInput): Promise<Plan> {
  const { mode, index } = input;
  const I = index?.entries ?? null;
  const target = mode === 'restore' ? null : input.target;
  if (index && mode !== 'force' && mode !== 'fresh') assertMerged(index);
  const rows = joinRows(I, index?.stages ?? null, mode === 'switch' ? input.head : null, target);
  // Whether a row's index entry, HEAD's and the target's are the same (mode and id; false
  // where either is absent), as the join found them.
  const sameIM = (r: number): boolean => (rows.same[r]! & SAME_IM) !== 0;
  const sameIH = (r: number): boolean => (rows.same[r]! & SAME_IH) !== 0;
  const sameHM = (r: number): boolean => (rows.same[r]! & SAME_HM) !== 0;
  const H = mode === 'switch' ? input.head : null;
  const M = target;
  const initial = mode === 'switch' && index === null;
  const racySeconds = index?.mtime.sec ?? 0;
  const latin1 = (r: number): string => {
    if (rows.i[r]! >= 0) return I!.name(rows.i[r]!);
    if (rows.m[r]! >= 0) return M!.name(rows.m[r]!);
    return H!.name(rows.h[r]!);
  };
  // Rows the pathspec selects (all when there is none); unmatched pathspecs stop it here.
  const scoped = new Uint8Array(rows.count).fill(1);
  if (input.pathspec) {
    // Matched against what the entries come from, as git does: the target's tree for a
    // checkout of paths, the index for a restore.
    const from = mode === 'paths' ? rows.m : rows.i;
    for (let r = 0; r < rows.count; r++) {
      scoped[r] = from[r]! >= 0 && input.pathspec.matches(latin1(r)) ? 1 : 0;
    }
    input.pathspec.assertAllMatched();
  }
  // git writes the files of a checkout of paths in a second pass whose pathspec match skips an
  // item once it matched a path exactly (its `seen` optimisation): a glob that is also a file
  // name (`lit/star*.txt`) then updates the index for every match but writes only that file.
  let worktreeScope: Uint8Array | null = null;
  if (input.pathspec && mode === 'paths') {
    const matcher = input.pathspec.worktreeMatcher();
    worktreeScope = new Uint8Array(rows.count);
    for (let r = 0; r < rows.count; r++) {
      if (scoped[r] === 1) worktreeScope[r] = matcher(latin1(r)) ? 1 : 0;
    }
  }
  const { inCone } = input;
  const outOfCone = (r: number): boolean => inCone !== null && !inCone(latin1(r));

  // 1. What must be looked at in the worktree.
  const probes = new ProbeList();
  const rowProbe = new Int32Array(rows.count).fill(-1);
  const pathOf = (r: number): Buffer => {
    if (rows.i[r]! >= 0) return I!.pathBytes(rows.i[r]!);
    if (rows.m[r]! >= 0) return M!.pathBytes(rows.m[r]!);
    return H!.pathBytes(rows.h[r]!);
  };
  const compareRow = (r: number): void => {
    rowProbe[r] = probes.addEntry(rows.i[r]!);
  };
  const lookRow = (r: number): void => {
    rowProbe[r] = probes.addPath(pathOf(r));
  };
  const skipWorktree = (i: number): boolean => (index!.extFlags[i]! & SKIP_WORKTREE) !== 0;
  const knownClean = input.knownClean ?? null;
  const known = (i: number): boolean => knownClean !== null && knownClean[i] === 1;
  // A restore of the whole index with no entry skipped or known clean (what `--restore`
  // runs in a fresh process): row r is entry r and probe slot r, and every row is compared, so
  // the per-row loops are done with bulk copies and builtin scans instead. A one-shot process
  // runs a loop over 78,000 rows in V8's interpreter, ~8 ms each.
  const whole =
    mode === 'restore' &&
    input.pathspec === null &&
    knownClean === null &&
    rows.count === I!.count &&
    allZero(index!.extFlags);
  if (whole) {
    rowProbe.set(identity(rows.count));
    probes.addAll(rows.count);
  }
  // The bulk of a switch: rows whose index entry, HEAD's and the target's are the same and not
  // racy are kept without a look (twoway_merge's cases 14 and 15). Where nothing else can apply
  // (no pathspec, no cone) the loops below visit only the other rows (listed natively), and the
  // plain ones between them are kept in bulk: a one-shot process runs a loop over 78,000 rows
  // in V8's interpreter, a few ms each.
  const { i: rowI } = rows;
  const toDecide =
    mode === 'switch' && index !== null && input.pathspec === null && inCone === null
      ? rowsToDecide(rows, index.stats, racySeconds)
      : null;
  const visits = toDecide ? toDecide.length : mode === 'fresh' || whole ? 0 : rows.count;
  for (let k = 0; k < visits; k++) {
    const r = toDecide ? toDecide[k]! : k;
    const i = rowI[r]!;
    const h = rows.h[r]!;
    const m = rows.m[r]!;
    if (scoped[r] === 0) continue;
    if (mode === 'restore') {
      if (!skipWorktree(i) && !known(i)) compareRow(r);
    } else if (i >= 0 && rows.unmerged[r] === 0 && !skipWorktree(i) && outOfCone(r)) {
      compareRow(r); // leaving the cone: the file goes if it is clean
    } else if (mode === 'force' || mode === 'paths') {
      if (i >= 0 && rows.unmerged[r] === 0 && !skipWorktree(i)) {
        // Known clean and kept as it is: nothing to look at (written or removed: looked at).
        if (!(known(i) && m >= 0 && sameIM(r))) compareRow(r);
      } else lookRow(r);
    } else if (i >= 0) {
      // switch: the worktree matters where the entry is to be replaced or removed, and where a
      // kept entry's stat data is racy (git checks those before it writes the new index).
      const replacing =
        (h >= 0 && m < 0 && sameIH(r)) ||
        (h >= 0 && m >= 0 && !sameHM(r) && sameIH(r) && !sameIM(r));
      const racy = racySeconds > 0 && index!.stats[i * STAT_WORDS + 2]! >= racySeconds;
      if ((replacing || racy) && !skipWorktree(i)) compareRow(r);
    } else if (m >= 0 ? h < 0 || initial : h >= 0) {
      lookRow(r); // a new path, or one git would remove from under an untracked file
    }
  }
  // Directories of a switch's new and changed entries: something untracked may be where they
  // go — a file, or a symlink to elsewhere where a tracked directory was (never written
  // through). `newDirs`: those a path new to the index needs (git's verify_absent).
  const dirSlots = new Map<string, number>();
  const newDirs = new Set<string>();
  if (mode === 'switch' && M) {
    const { m: rowM, same } = rows;
    for (let k = 0; k < visits; k++) {
      const r = toDecide ? toDecide[k]! : k;
      const m = rowM[r]!;
      if (m < 0 || (same[r]! & SAME_IM) !== 0) continue; // (SAME_IM: the index has it)
      if (outOfCone(r)) continue; // never written: nothing in the way
      const i = rowI[r]!;
      for (const d of ancestors(M.name(m))) {
        // A directory seen (as new, when this entry is) has its parents seen the same way.
        if (dirSlots.has(d) && (i >= 0 || newDirs.has(d))) break;
        if (i < 0) newDirs.add(d);
        if (!dirSlots.has(d)) dirSlots.set(d, probes.addPath(Buffer.from(d, 'latin1')));
      }
    }
  }
  const found =
    probes.size === 0
      ? EMPTY_PROBE
      : await input.probe({
          ...probes.request(
            input.root,
            index,
            racySeconds,
            input.fileMode,
            probes.size > input.threshold ? input.probeThreads : 1,
          ),
          symlinks: input.symlinks ?? true,
          // git refreshes the index before a switch (a touched file is hashed, and clean if
          // its content is), not before checkout -f or checkout-index (it is rewritten).
          statChangeIsDirty: mode !== 'switch',
        });
  const kindAt = (r: number): number => (rowProbe[r]! < 0 ? KIND_ABSENT : found.kind(rowProbe[r]!));
  const cleanAt = (r: number): boolean => rowProbe[r]! < 0 || found.clean[rowProbe[r]!] === 1;
  // git's verify_uptodate: a file deleted from the worktree loses nothing when replaced.
  const uptodate = (r: number): boolean => cleanAt(r) || kindAt(r) === KIND_ABSENT;

  // 2. Decide each row.
  const conflicts = new Conflicts();
  // The result, one position per kept or written entry (typed: the Linux tree has 78,000).
  const resSrc = new Uint8Array(rows.count); // 0 = from the index, 1 = from the target
  const resIdx = new Int32Array(rows.count);
  const resWrite = new Uint8Array(rows.count);
  const resReplace = new Uint8Array(rows.count);
  const resExt = new Uint16Array(rows.count); // extended flags of each result entry
  const freshSlot = new Int32Array(rows.count).fill(-1); // probe slot whose stat data is good
  const smudge = new Uint8Array(rows.count); // racy and not clean: size zeroed, as git does
  // Matches the worktree afterwards: written, or looked at (or known) and clean.
  const resVerified = new Uint8Array(rows.count);
  let n = 0;
  const deletes: { path: string; dir: boolean }[] = [];
  const clears: string[] = [];
  const dirsInTheWay: { row: number; path: string }[] = [];
  const fate = new Uint8Array(I?.count ?? 0); // per index entry: 1 removed, 2 replaced
  let created = 0;
  let updated = 0;
  let removed = 0;

  const keep = (r: number): void => {
    const i = rows.i[r]!;
    const slot = rowProbe[r]!;
    let ext = index!.extFlags[i]! & (SKIP_WORKTREE | INTENT_TO_ADD);
    if (inCone !== null && mode !== 'restore' && rows.unmerged[r] === 0) {
      const out = !inCone(I!.name(i));
      if (!out && (ext & SKIP_WORKTREE) !== 0) {
        write(r, true, i, true); // back in the cone: the file comes back
        return;
      }
      if (out && (ext & SKIP_WORKTREE) === 0) {
        // Leaving the cone: a clean file goes and the entry is marked; a modified one stays.
        if (kindAt(r) === KIND_ABSENT || cleanAt(r)) {
          dropFile(r, i);
          ext |= SKIP_WORKTREE;
        }
      }
    }
    resSrc[n] = 0;
    resIdx[n] = i;
    resExt[n] = ext;
    resVerified[n] =
      rows.unmerged[r] === 0 &&
      (ext & SKIP_WORKTREE) === 0 &&
      (slot >= 0 ? found.clean[slot] === 1 && kindAt(r) !== KIND_ABSENT : known(i))
        ? 1
        : 0;
    if (slot >= 0 && found.hashed[slot] === 1) freshSlot[n] = slot;
    // git smudges a kept racy entry only where the stat data still matches (statSame). A
    // symlink keeps the older rule, smudged whenever not clean: once in CI a retargeted link
    // whose entry was kept unsmudged was then taken as clean by git status (not understood yet).
    else if (
      slot >= 0 &&
      found.clean[slot] !== 1 &&
      mode === 'switch' &&
      (found.kind(slot) === KIND_SYMLINK || statSame(slot, i))
    )
      smudge[n] = 1;
    n++;
  };
  /**
   * Whether the worktree's fresh stat data (probe slot) is still the index entry's: git
   * smudges a kept entry's size only then (racily clean: the stat data matches, the content
   * does not); a file whose stat data changed keeps its entry as it was.
   */
  const statSame = (slot: number, i: number): boolean => {
    const kind = found.kind(slot);
    if (kind !== KIND_FILE && kind !== KIND_SYMLINK) return false;
    const a = slot * STAT_WORDS;
    const b = i * STAT_WORDS;
    for (const w of [0, 1, 2, 3, 5, 7, 8, 9]) {
      if (found.stats[a + w] !== index!.stats[b + w]) return false;
    }
    return true;
  };
  /** An entry taken into the index without its file (no stat data, as a new entry from a tree). */
  const indexOnly = (k: number): void => {
    resSrc[n] = 1;
    resIdx[n] = k;
    n++;
  };
  /** Removes an index entry's file (or a gitlink's directory, when empty) from the worktree. */
  const dropFile = (r: number, i: number): void => {
    const kind = kindAt(r);
    if (kind === KIND_ABSENT) return;
    if (kind === KIND_DIR) {
      if (I!.modes[i] === MODE_GITLINK) deletes.push({ path: I!.name(i), dir: true });
      return;
    }
    deletes.push({ path: I!.name(i), dir: false });
  };
  /**
   * An entry outside the cone: recorded with the skip-worktree bit, its file kept away. A
   * forced checkout removes the file of an entry leaving the cone even when it is modified
   * (git's oneway_merge marks such an entry for update, and apply_sparse_checkout then removes
   * every file marked so without looking); an entry it keeps as it is (the same in the index
   * and the target) keeps its stat data, as git's does.
   */
  const skip = (r: number, k: number): void => {
    const i = rows.i[r]!;
    if (i >= 0 && rows.unmerged[r] === 0 && (index!.extFlags[i]! & SKIP_WORKTREE) === 0) {
      const kind = kindAt(r);
      if (mode !== 'force' && (kind === KIND_FILE || kind === KIND_SYMLINK) && !cleanAt(r)) {
        write(r, false, k, false, true); // modified: git leaves it checked out
        return;
      }
      dropFile(r, i);
      if (mode === 'force' && sameIM(r)) {
        resSrc[n] = 0;
        resIdx[n] = i;
        resExt[n] = SKIP_WORKTREE;
        n++;
        return;
      }
    }
    resSrc[n] = 1;
    resIdx[n] = k;
    resExt[n] = SKIP_WORKTREE;
    n++;
  };
  /** Writes entry k of `list` (M, or I for restore) at row r's path. */
  const write = (
    r: number,
    fromIndex: boolean,
    k: number,
    guarded: boolean,
    anyway = false,
  ): void => {
    const list = fromIndex ? I! : M!;
    const kind = kindAt(r);
    const path = list.name(k);
    if (!anyway && !fromIndex && inCone !== null && !inCone(path)) {
      skip(r, k);
      return;
    }
    let replace = 0;
    if (kind === KIND_DIR) {
      const wasGitlink = rows.i[r]! >= 0 && I!.modes[rows.i[r]!] === MODE_GITLINK;
      if (list.modes[k] === MODE_GITLINK) {
        // The directory stays: it is what a gitlink needs.
      } else if (wasGitlink) {
        // A submodule's directory is removed only when empty, never recursively.
        deletes.push({ path, dir: true });
      } else if (guarded) {
        dirsInTheWay.push({ row: r, path });
      } else {
        clears.push(path);
      }
    } else if (kind === KIND_ERROR) {
      throw new PcheckoutError('ERR_IO', `cannot look at ${display(path)} in the worktree`, {
        path: display(path),
      });
    } else if (kind !== KIND_ABSENT) {
      // A file or symlink goes first: unlinked by the writer for files and links, up front
      // for a gitlink, whose directory is made with the others.
      if (list.modes[k] === MODE_GITLINK) deletes.push({ path, dir: false });
      else replace = 1;
    }
    const i = rows.i[r]!;
    if (i >= 0 && rows.unmerged[r] === 0) fate[i] = 2;
    if (kind === KIND_ABSENT) created++;
    else updated++;
    resSrc[n] = fromIndex ? 0 : 1;
    resIdx[n] = k;
    resWrite[n] = 1;
    resReplace[n] = replace;
    resVerified[n] = 1;
    n++;
  };
  const remove = (r: number): void => {
    const i = rows.i[r]!;
    fate[i] = 1;
    removed++;
    const kind = kindAt(r);
    if (kind === KIND_ABSENT) return;
    if (kind === KIND_DIR) {
      // A gitlink's directory is removed when empty; a directory where a file was tracked is
      // someone else's now.
      if (I!.modes[i] === MODE_GITLINK) deletes.push({ path: I!.name(i), dir: true });
      return;
    }
    deletes.push({ path: I!.name(i), dir: false });
  };
  const untrackedInTheWay = (r: number, path: string, list: string[]): void => {
    const kind = kindAt(r);
    if (kind === KIND_ABSENT) return;
    if (kind === KIND_DIR) return; // checked with its contents below (write) or left (remove)
    if (input.isIgnored(path, false)) {
      if (list === conflicts.untrackedOverwritten) clears.push(path);
      return;
    }
    list.push(display(path));
  };

  if (whole) {
    // Every row keeps its entry (result position r, no flags: resSrc and resExt stay 0) or is
    // rewritten from it, and is verified either way; a row hashed clean takes its fresh stat.
    resIdx.set(identity(rows.count));
    resVerified.fill(1, 0, rows.count);
    for (let r = found.clean.indexOf(0); r >= 0; r = found.clean.indexOf(0, r + 1)) {
      n = r;
      write(r, true, r, false);
    }
    for (let r = found.hashed.indexOf(1); r >= 0; r = found.hashed.indexOf(1, r + 1))
      freshSlot[r] = r;
    n = rows.count;
  }
  // A fresh checkout outside any cone writes every row of the target as it is: in bulk (a name
  // per row, as write() makes, was ~19 ms of the Linux tree's plan).
  const freshBulk =
    mode === 'fresh' &&
    input.pathspec === null &&
    inCone === null &&
    M !== null &&
    rows.count === M.count;
  if (freshBulk) {
    resSrc.fill(1, 0, rows.count);
    resIdx.set(identity(rows.count));
    resWrite.fill(1, 0, rows.count);
    resVerified.fill(1, 0, rows.count);
    created = n = rows.count;
  }
  // Rows [from, to) not visited: kept as they are (what keep does for a row it did not see).
  const extAllZero = index === null || allZero(index.extFlags);
  const keepPlain = (from: number, to: number): void => {
    resIdx.set(rowI.subarray(from, to), n);
    for (let r = from; r < to && !(extAllZero && knownClean === null); r++) {
      const i = rowI[r]!;
      const ext = index!.extFlags[i]! & (SKIP_WORKTREE | INTENT_TO_ADD);
      resExt[n + r - from] = ext;
      resVerified[n + r - from] = (ext & SKIP_WORKTREE) === 0 && known(i) ? 1 : 0;
    }
    n += to - from;
  };
  let plainFrom = 0;
  const decide = whole || freshBulk ? 0 : toDecide ? toDecide.length : rows.count;
  for (let k = 0; k < decide; k++) {
    const r = toDecide ? toDecide[k]! : k;
    if (toDecide) {
      keepPlain(plainFrom, r);
      plainFrom = r + 1;
    }
    const i = rowI[r]!;
    const h = rows.h[r]!;
    const m = rows.m[r]!;
    if (scoped[r] === 0) {
      if (i >= 0) keep(r); // outside the pathspec: untouched
    } else if (mode === 'fresh') {
      write(r, false, m, false);
    } else if (mode === 'restore') {
      if (cleanAt(r) || skipWorktree(i)) keep(r);
      else write(r, true, i, false);
    } else if (mode === 'force' || mode === 'paths') {
      if (m >= 0 && worktreeScope !== null && worktreeScope[r] === 0) {
        // git's quirk: the index takes it, the worktree does not (see worktreeScope).
        if (i >= 0 && rows.unmerged[r] === 0 && sameIM(r)) keep(r);
        else indexOnly(m);
      } else if (m >= 0) {
        if (i >= 0 && rows.unmerged[r] === 0 && sameIM(r) && cleanAt(r)) keep(r);
        else if (i >= 0 && rows.unmerged[r] === 0 && sameIM(r) && skipWorktree(i)) keep(r);
        else write(r, false, m, false);
      } else if (i >= 0) {
        if (mode === 'paths')
          keep(r); // overlay: entries the target lacks stay
        else remove(r);
      }
    } else if (i >= 0) {
      // git's twoway_merge, case numbers from git-read-tree(1) "Two Tree Merge".
      const path = (): string => I!.name(i); // only for a refusal: most rows are kept
      if (
        (h < 0 && m < 0) || // 4, 5
        (h < 0 && m >= 0 && sameIM(r)) || // 6, 7
        (h >= 0 && m >= 0 && sameHM(r)) || // 14, 15
        (h >= 0 && m >= 0 && sameIM(r)) // 18, 19
      ) {
        keep(r);
      } else if (h >= 0 && m < 0 && sameIH(r)) {
        // 10, 11
        if (uptodate(r) || skipWorktree(i)) remove(r);
        else conflicts.localChanges.push(display(path()));
      } else if (h >= 0 && m >= 0 && sameIH(r)) {
        // 20, 21
        if (uptodate(r) || skipWorktree(i)) write(r, false, m, true);
        else conflicts.localChanges.push(display(path()));
      } else {
        conflicts.localChanges.push(display(path())); // staged changes the target would lose
      }
    } else if (m >= 0) {
      if (h >= 0 && !initial) {
        // The path's removal is staged: fine while the target does not change it.
        if (!sameHM(r)) conflicts.localChanges.push(display(M!.name(m)));
      } else {
        // Outside the cone nothing is written: git's verify_absent does not look there.
        if (!outOfCone(r)) untrackedInTheWay(r, M!.name(m), conflicts.untrackedOverwritten);
        write(r, false, m, true);
      }
    } else if (h >= 0) {
      untrackedInTheWay(r, H!.name(h), conflicts.untrackedRemoved);
    }
  }

  if (toDecide) keepPlain(plainFrom, rows.count);

  // A checkout of paths adds entries next to kept ones: one that is now a directory, or that
  // a new file replaces with its directory, leaves the index (git replaces it).
  if (mode === 'paths')
    n = dropShadowed(n, resSrc, resIdx, resWrite, resReplace, resExt, freshSlot, smudge, I, M);

  // 3. Things in the way of new directories, and directories in the way of new files.
  if (mode === 'switch') {
    for (const [dir, slot] of dirSlots) {
      const kind = found.kind(slot);
      if (kind === KIND_ABSENT || kind === KIND_DIR) continue;
      const at = I ? findPath(I, dir) : -1;
      if (at >= 0 && fate[at] === 1) continue; // a tracked file the switch removes first
      if (at >= 0) conflicts.localChanges.push(display(dir));
      else if (input.isIgnored(dir, false)) clears.push(dir);
      else if (newDirs.has(dir)) conflicts.untrackedOverwritten.push(display(dir));
      else clears.push(dir); // as git's checkout does where only changed entries need the directory
    }
    for (const { path } of dirsInTheWay) {
      const lost = untrackedInside(input.listDir, path, I, input.isIgnored);
      if (lost) conflicts.dirsLosingUntracked.push(display(path));
      else clears.push(path);
    }
  }
  if (conflicts.count > 0) throw conflicts.error();

  // 4. The result index and the write lists.
  const result = gatherEntries(resSrc.subarray(0, n), resIdx.subarray(0, n), I, M);
  const writeFlags = resWrite.slice(0, n);
  const replace = resReplace.slice(0, n);
  // Kept entries keep their stat data (zeroed size where smudged), those hashed clean take the
  // probe's, new and written ones have none yet: gathered natively, one copy per entry.
  const stats = gatherStats(
    {
      src: resSrc.subarray(0, n),
      idx: resIdx.subarray(0, n),
      write: writeFlags,
      freshSlot: freshSlot.subarray(0, n),
      smudge: smudge.subarray(0, n),
    },
    index?.stats ?? new Uint32Array(0),
    found.stats,
  );
  const extFlags = new Uint16Array(n);
  extFlags.set(resExt.subarray(0, n));
  const fileIdx: number[] = [];
  const symlinks: number[] = [];
  const gitlinks: number[] = [];
  for (let k = writeFlags.indexOf(1); k >= 0; k = writeFlags.indexOf(1, k + 1)) {
    const mode = result.modes[k]!;
    if (mode === MODE_SYMLINK) symlinks.push(k);
    else if (mode === MODE_GITLINK) gitlinks.push(k);
    else fileIdx.push(k);
  }
  const files = locateFiles(odb, result, fileIdx);
  // Links are written last, but their targets are looked up now, with the files' blobs: a
  // missing one fails the checkout before anything is written.
  locateFiles(odb, result, symlinks);
  let fileBytes = 0;
  for (const f of files) fileBytes += f.size;
  const rmdirs = emptiedDirs(deletes, result, extFlags);
  // A switch looked at the directories of its new and changed entries: those found to be real
  // directories, and not removed before the writes, are not made again (an mkdir that fails
  // with EEXIST and an lstat each: ~700 of them in a 1% switch of the Linux tree).
  const goneFirst = new Set([
    ...clears,
    ...rmdirs,
    ...deletes.filter((d) => d.dir).map((d) => d.path),
  ]);
  const stays = (dir: string): boolean => {
    for (let d = dir; ; d = d.slice(0, d.lastIndexOf('/'))) {
      if (goneFirst.has(d)) return false;
      if (!d.includes('/')) return true;
    }
  };
  const dirs = dirsOf(result, writeFlags).filter((d) => {
    const slot = dirSlots.get(d);
    return slot === undefined || found.kind(slot) !== KIND_DIR || !stays(d);
  });
  return {
    mode,
    result,
    stats,
    extFlags,
    write: writeFlags,
    replace,
    files,
    symlinks,
    gitlinks,
    dirs,
    deletes,
    rmdirs,
    clears,
    replaceInTheWay: mode !== 'switch',
    fileBytes,
    counts: { created, updated, deleted: removed },
    verified:
      mode === 'restore' || mode === 'force' || mode === 'fresh' ? resVerified.slice(0, n) : null,
  };
}

let identityRows = new Int32Array(0);
/** 0, 1, … count - 1 (shared, grown as needed: copy it, never write to it). */
function identity(count: number): Int32Array {
  if (identityRows.length < count) {
    identityRows = new Int32Array(Math.max(count, 2 * identityRows.length));
    for (let k = 0; k < identityRows.length; k++) identityRows[k] = k;
  }
  return identityRows.subarray(0, count);
}

/** Whether every byte of a typed array is zero (one memcmp against a zeroed buffer). */
function allZero(a: Uint16Array): boolean {
  const bytes = bytesOf(a);
  return bytes.equals(Buffer.alloc(bytes.length));
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

/**
 * Removes kept index entries that a written entry shadows (a file `a` kept while `a/x` is
 * written, or `a/x` kept while a file `a` is written), compacting the result arrays in place.
 * Returns the new count.
 */
function dropShadowed(
  n: number,
  src: Uint8Array,
  idx: Int32Array,
  write: Uint8Array,
  replace: Uint8Array,
  ext: Uint16Array,
  freshSlot: Int32Array,
  smudge: Uint8Array,
  I: EntryList | null,
  M: EntryList | null,
): number {
  const name = (k: number): string => (src[k] === 0 ? I! : M!).name(idx[k]!);
  const writtenFiles = new Set<string>();
  const writtenDirs = new Set<string>();
  for (let k = 0; k < n; k++) {
    if (write[k] !== 1) continue;
    const path = name(k);
    writtenFiles.add(path);
    for (const d of ancestors(path)) {
      if (writtenDirs.has(d)) break;
      writtenDirs.add(d);
    }
  }
  let out = 0;
  for (let k = 0; k < n; k++) {
    if (write[k] !== 1) {
      const path = name(k);
      let shadowed = writtenDirs.has(path);
      for (const d of ancestors(path)) if (writtenFiles.has(d)) shadowed = true;
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
