/**
 * What the planners decide, row by row: the result index (one position per kept or written
 * entry), and what the worktree gets — written, removed, cleared out of the way. Every mode
 * records through the same four verbs (keep, write, remove, indexOnly); the sparse checkout
 * applies inside them (filters.ts). Typed arrays: the Linux tree has 78,000 rows.
 */
import { PcheckoutError } from '../errors.js';
import { Conflicts, display } from './conflicts.js';
import { sparseForKept, sparseForUpdated } from './filters.js';
import { KIND_ABSENT, KIND_DIR, KIND_ERROR, KIND_FILE, KIND_SYMLINK } from './probe.js';
import { INTENT_TO_ADD, SKIP_WORKTREE, allZero, type Stage } from './stage.js';
import { MODE_GITLINK } from './tree.js';

/** How a mode's decisions differ where they are recorded. */
export interface Policy {
  /**
   * The cone applied to kept and written entries (null: no sparse checkout, or a restore,
   * which leaves the skip-worktree bits as they are).
   */
  inCone: ((path: string) => boolean) | null;
  /** A forced checkout's one-way merge with reset: see sparseForUpdated and skip. */
  reset: boolean;
  /** A kept entry racy and not clean has its size zeroed (a switch: see keep). */
  smudgeRacy: boolean;
}

export class Decisions {
  private readonly s: Stage;
  private readonly policy: Policy;
  /** Per result position: 0 = from the index, 1 = from the target; its entry there. */
  readonly src: Uint8Array;
  readonly idx: Int32Array;
  readonly write: Uint8Array;
  readonly replace: Uint8Array;
  /** Extended flags of each result entry. */
  readonly ext: Uint16Array;
  /** Probe slot whose stat data is good (hashed clean), or -1. */
  readonly freshSlot: Int32Array;
  /** Racy and not clean: size zeroed, as git does. */
  readonly smudge: Uint8Array;
  /** Matches the worktree afterwards: written, or looked at (or known) and clean. */
  readonly verified: Uint8Array;
  /** Result positions used. */
  n = 0;
  readonly deletes: { path: string; dir: boolean }[] = [];
  readonly clears: string[] = [];
  /** Directories where a guarded write wants a file (a switch checks them: twoway.ts). */
  readonly dirsInTheWay: { row: number; path: string }[] = [];
  /** Per index entry: 1 removed, 2 replaced. */
  readonly fate: Uint8Array;
  readonly conflicts = new Conflicts();
  created = 0;
  updated = 0;
  removed = 0;
  private extAllZero: boolean | null = null;

  constructor(stage: Stage, policy: Policy) {
    this.s = stage;
    this.policy = policy;
    const count = stage.rows.count;
    this.src = new Uint8Array(count);
    this.idx = new Int32Array(count);
    this.write = new Uint8Array(count);
    this.replace = new Uint8Array(count);
    this.ext = new Uint16Array(count);
    this.freshSlot = new Int32Array(count).fill(-1);
    this.smudge = new Uint8Array(count);
    this.verified = new Uint8Array(count);
    this.fate = new Uint8Array(stage.I?.count ?? 0);
  }

  /** Row r's index entry stays as it is (its file too, unless the cone says otherwise). */
  keep(r: number): void {
    const s = this.s;
    const i = s.rows.i[r]!;
    const slot = s.rowProbe[r]!;
    const { found } = s;
    let ext = s.index!.extFlags[i]! & (SKIP_WORKTREE | INTENT_TO_ADD);
    if (this.policy.inCone !== null && s.merged(r)) {
      const inside = this.policy.inCone(s.I!.name(i));
      switch (sparseForKept((ext & SKIP_WORKTREE) !== 0, inside, s.uptodate(r))) {
        case 'check out':
          this.writeEntry(r, true, i, true);
          return;
        case 'remove':
          this.dropFile(r, i);
          ext |= SKIP_WORKTREE;
          break;
        case 'none':
      }
    }
    const n = this.n++;
    this.src[n] = 0;
    this.idx[n] = i;
    this.ext[n] = ext;
    this.verified[n] =
      s.merged(r) &&
      (ext & SKIP_WORKTREE) === 0 &&
      (slot >= 0 ? found.clean[slot] === 1 && s.kindAt(r) !== KIND_ABSENT : s.known(i))
        ? 1
        : 0;
    if (slot >= 0 && found.hashed[slot] === 1) this.freshSlot[n] = slot;
    // git smudges a kept racy entry only where the stat data still matches (statSame). A
    // symlink keeps the older rule, smudged whenever not clean: once in CI a retargeted link
    // whose entry was kept unsmudged was then taken as clean by git status (not understood yet).
    else if (
      slot >= 0 &&
      found.clean[slot] !== 1 &&
      this.policy.smudgeRacy &&
      (found.kind(slot) === KIND_SYMLINK || s.statSame(slot, i))
    )
      this.smudge[n] = 1;
  }

  /** Rows [from, to) not visited: kept as they are (what keep does for a row it did not see). */
  keepRun(from: number, to: number): void {
    const s = this.s;
    const rowI = s.rows.i;
    this.extAllZero ??= s.index === null || allZero(s.index.extFlags);
    const n = this.n;
    this.idx.set(rowI.subarray(from, to), n);
    for (let r = from; r < to && !(this.extAllZero && s.knownClean === null); r++) {
      const i = rowI[r]!;
      const ext = s.index!.extFlags[i]! & (SKIP_WORKTREE | INTENT_TO_ADD);
      this.ext[n + r - from] = ext;
      this.verified[n + r - from] = (ext & SKIP_WORKTREE) === 0 && s.known(i) ? 1 : 0;
    }
    this.n += to - from;
  }

  /** An entry taken into the index without its file (no stat data, as a new entry from a tree). */
  indexOnly(k: number): void {
    this.src[this.n] = 1;
    this.idx[this.n] = k;
    this.n++;
  }

  /** Row r's index entry goes, and its file (or a gitlink's directory, when empty). */
  remove(r: number): void {
    const i = this.s.rows.i[r]!;
    this.fate[i] = 1;
    this.removed++;
    this.dropFile(r, i);
  }

  /**
   * Writes entry k of the target (or of the index: `fromIndex`) at row r's path. `guarded`: a
   * directory in the way is checked for untracked files (a switch) instead of cleared; an entry
   * outside the cone is recorded skip-worktree instead (skip), unless `anyway`.
   */
  writeEntry(r: number, fromIndex: boolean, k: number, guarded: boolean, anyway = false): void {
    const s = this.s;
    const list = fromIndex ? s.I! : s.M!;
    const kind = s.kindAt(r);
    const path = list.name(k);
    const { inCone } = this.policy;
    if (!anyway && !fromIndex && inCone !== null && !inCone(path)) {
      this.skip(r, k);
      return;
    }
    const i = s.rows.i[r]!;
    let replace = 0;
    if (kind === KIND_DIR) {
      const wasGitlink = i >= 0 && s.I!.modes[i] === MODE_GITLINK;
      if (list.modes[k] === MODE_GITLINK) {
        // The directory stays: it is what a gitlink needs.
      } else if (wasGitlink) {
        // A submodule's directory is removed only when empty, never recursively.
        this.deletes.push({ path, dir: true });
      } else if (guarded) {
        this.dirsInTheWay.push({ row: r, path });
      } else {
        this.clears.push(path);
      }
    } else if (kind === KIND_ERROR) {
      throw new PcheckoutError('ERR_IO', `cannot look at ${display(path)} in the worktree`, {
        path: display(path),
      });
    } else if (kind !== KIND_ABSENT) {
      // A file or symlink goes first: unlinked by the writer for files and links, up front
      // for a gitlink, whose directory is made with the others.
      if (list.modes[k] === MODE_GITLINK) this.deletes.push({ path, dir: false });
      else replace = 1;
    }
    if (i >= 0 && s.merged(r)) this.fate[i] = 2;
    if (kind === KIND_ABSENT) this.created++;
    else this.updated++;
    const n = this.n++;
    this.src[n] = fromIndex ? 0 : 1;
    this.idx[n] = k;
    this.write[n] = 1;
    this.replace[n] = replace;
    this.verified[n] = 1;
  }

  /**
   * Target entry k at row r lies outside the cone: recorded with the skip-worktree bit, its
   * file kept away (see sparseForUpdated for the file of a tracked entry); an entry a forced
   * checkout keeps as it is (the same in the index and the target) keeps its stat data, as
   * git's does.
   */
  private skip(r: number, k: number): void {
    const s = this.s;
    const i = s.rows.i[r]!;
    if (i >= 0 && s.merged(r) && !s.skipWorktree(i)) {
      const kind = s.kindAt(r);
      const modified = (kind === KIND_FILE || kind === KIND_SYMLINK) && !s.cleanAt(r);
      if (sparseForUpdated(this.policy.reset, modified) === 'stay') {
        this.writeEntry(r, false, k, false, true); // git leaves it checked out
        return;
      }
      this.dropFile(r, i);
      if (this.policy.reset && s.sameIM(r)) {
        this.src[this.n] = 0;
        this.idx[this.n] = i;
        this.ext[this.n] = SKIP_WORKTREE;
        this.n++;
        return;
      }
    }
    this.src[this.n] = 1;
    this.idx[this.n] = k;
    this.ext[this.n] = SKIP_WORKTREE;
    this.n++;
  }

  /** Removes index entry i's file (or a gitlink's directory, when empty) from the worktree. */
  private dropFile(r: number, i: number): void {
    const s = this.s;
    const kind = s.kindAt(r);
    if (kind === KIND_ABSENT) return;
    if (kind === KIND_DIR) {
      // A gitlink's directory is removed when empty; a directory where a file was tracked is
      // someone else's now.
      if (s.I!.modes[i] === MODE_GITLINK) this.deletes.push({ path: s.I!.name(i), dir: true });
      return;
    }
    this.deletes.push({ path: s.I!.name(i), dir: false });
  }
}
