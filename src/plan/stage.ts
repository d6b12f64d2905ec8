/**
 * The stage every planner shares: the index, HEAD's tree and the target joined into rows (one
 * per path, see rows.ts), the rows the pathspec selects, and the worktree looked at where a
 * mode's decision depends on it. A planner (fresh.ts, twoway.ts, oneway.ts, restore.ts,
 * checkout-paths.ts) says which rows to look at, runs the look, and decides each row into a
 * Decisions (decisions.ts).
 */
import { bytesOf, sameStatData } from '../index/write.js';
import type { Decisions } from './decisions.js';
import type { EntryList } from './entries.js';
import { pathspecScope } from './filters.js';
import type { CurrentIndex, Mode, PlanInput } from './plan.js';
import { EMPTY_PROBE, ProbeList } from './probe-list.js';
import { KIND_ABSENT, KIND_FILE, KIND_SYMLINK, type ProbeResult } from './probe.js';
import { MODE_GITLINK, MODE_SYMLINK } from './tree.js';
import { SAME_HM, SAME_IH, SAME_IM, joinRows, type Rows } from './rows.js';

export const SKIP_WORKTREE = 0x4000;
export const INTENT_TO_ADD = 0x2000;

/** What a mode joins: HEAD's tree (a switch), the target (all but a restore). */
export interface Joins {
  head: boolean;
  target: boolean;
  /** What the pathspec is matched against (see pathspecScope). */
  pathspecFrom: 'index' | 'target';
}

/** What a mode's planner hands to the plan's assembly (finish.ts). */
export interface Planned {
  decisions: Decisions;
  /** Whether every entry was written, looked at or known: Plan.verified is kept then. */
  verified: boolean;
  /** Plan.replaceInTheWay: mkdir may replace a file or symlink in the way (forced). */
  replaceInTheWay: boolean;
  /** Directories looked at (a switch's, see twoway.ts): probe slot by latin1 path. */
  dirsLooked: ReadonlyMap<string, number> | null;
}

/** One mode's planner: what it joins, and its decisions. */
export interface Planner {
  joins: Joins;
  /** Whether git refuses to run it on an index with unmerged entries (assertMerged). */
  mergedOnly: boolean;
  plan(stage: Stage): Promise<Planned>;
}

export class Stage {
  readonly input: PlanInput;
  readonly mode: Mode;
  readonly index: CurrentIndex | null;
  /** The index's entries, HEAD's tree and the target: null where absent or not joined. */
  readonly I: EntryList | null;
  readonly H: EntryList | null;
  readonly M: EntryList | null;
  readonly rows: Rows;
  /** The index file's mtime in seconds: entries stamped that second or later are racy. */
  readonly racySeconds: number;
  readonly inCone: ((path: string) => boolean) | null;
  readonly knownClean: Uint8Array | null;
  /** Per row, 1 where the pathspec selects it (all when there is none). */
  readonly scoped: Uint8Array;
  readonly probes = new ProbeList();
  /** Per row, its slot in the probe list, or -1 where the worktree is not looked at. */
  readonly rowProbe: Int32Array;
  /** What the look found (see look). */
  found: ProbeResult = EMPTY_PROBE;

  constructor(input: PlanInput, joins: Joins) {
    this.input = input;
    this.mode = input.mode;
    this.index = input.index;
    this.I = input.index?.entries ?? null;
    this.H = joins.head ? input.head : null;
    this.M = joins.target ? input.target : null;
    this.rows = joinRows(this.I, input.index?.stages ?? null, this.H, this.M);
    this.racySeconds = input.index?.mtime.sec ?? 0;
    this.inCone = input.inCone;
    this.knownClean = input.knownClean ?? null;
    const from = joins.pathspecFrom === 'target' ? this.rows.m : this.rows.i;
    this.scoped = pathspecScope(input.pathspec, from, this.rows.count, (r) => this.latin1(r));
    this.rowProbe = new Int32Array(this.rows.count).fill(-1);
  }

  /** Row r's path as a latin1 string (see EntryList.name). */
  latin1(r: number): string {
    const { rows } = this;
    if (rows.i[r]! >= 0) return this.I!.name(rows.i[r]!);
    if (rows.m[r]! >= 0) return this.M!.name(rows.m[r]!);
    return this.H!.name(rows.h[r]!);
  }

  private pathOf(r: number): Buffer {
    const { rows } = this;
    if (rows.i[r]! >= 0) return this.I!.pathBytes(rows.i[r]!);
    if (rows.m[r]! >= 0) return this.M!.pathBytes(rows.m[r]!);
    return this.H!.pathBytes(rows.h[r]!);
  }

  /**
   * Whether a row's index entry, HEAD's and the target's are the same (mode and id; false
   * where either is absent), as the join found them.
   */
  sameIM(r: number): boolean {
    return (this.rows.same[r]! & SAME_IM) !== 0;
  }
  sameIH(r: number): boolean {
    return (this.rows.same[r]! & SAME_IH) !== 0;
  }
  sameHM(r: number): boolean {
    return (this.rows.same[r]! & SAME_HM) !== 0;
  }

  /** Whether row r's index entry, if any, is a merged one (not only unmerged stages). */
  merged(r: number): boolean {
    return this.rows.unmerged[r] === 0;
  }

  skipWorktree(i: number): boolean {
    return (this.index!.extFlags[i]! & SKIP_WORKTREE) !== 0;
  }

  /** Whether the worktree is known to match index entry i (see PlanInput.knownClean). */
  known(i: number): boolean {
    return this.knownClean !== null && this.knownClean[i] === 1;
  }

  /** Whether a cone-mode sparse checkout leaves row r's path out. */
  outOfCone(r: number): boolean {
    return this.inCone !== null && !this.inCone(this.latin1(r));
  }

  /** Row r's path is looked at and compared with its index entry. */
  compareRow(r: number): void {
    this.rowProbe[r] = this.probes.addEntry(this.rows.i[r]!);
  }

  /** Row r's path is looked at: what is there, nothing compared. */
  lookRow(r: number): void {
    this.rowProbe[r] = this.probes.addPath(this.pathOf(r));
  }

  /** A path of no row (a directory, latin1) is looked at: its probe slot. */
  lookPath(path: string): number {
    return this.probes.addPath(Buffer.from(path, 'latin1'));
  }

  /**
   * Runs the probe of everything listed. `refreshed`: git refreshes the index before a switch
   * (a touched file is hashed, and clean if its content is), not before checkout -f or
   * checkout-index (it is rewritten).
   */
  async look(refreshed: boolean): Promise<void> {
    const { input, probes } = this;
    if (probes.size === 0) return;
    this.found = await input.probe({
      ...probes.request(
        input.root,
        this.index,
        this.racySeconds,
        input.fileMode,
        probes.size > input.threshold ? input.probeThreads : 1,
      ),
      symlinks: input.symlinks ?? true,
      statChangeIsDirty: !refreshed,
      ...(input.probePerThread !== undefined ? { perThread: input.probePerThread } : {}),
    });
  }

  /**
   * What the look found at row r's path; where it did not look, what a warm engine's watch
   * vouches is there (the index entry's file or symlink), else KIND_ABSENT.
   */
  kindAt(r: number): number {
    const slot = this.rowProbe[r]!;
    if (slot >= 0) return this.found.kind(slot);
    const i = this.rows.i[r]!;
    return i >= 0 && this.knownFile(i)
      ? this.I!.modes[i] === MODE_SYMLINK
        ? KIND_SYMLINK
        : KIND_FILE
      : KIND_ABSENT;
  }

  /**
   * Whether index entry i is a file or symlink the watch vouches for (the worktree matched it,
   * nothing happened there since): clean, and there as the entry says, without a look.
   * Gitlinks are always looked at.
   */
  knownFile(i: number): boolean {
    return this.known(i) && this.I!.modes[i] !== MODE_GITLINK;
  }

  /** Whether row r's worktree matches its index entry (true where it did not look). */
  cleanAt(r: number): boolean {
    const slot = this.rowProbe[r]!;
    return slot < 0 || this.found.clean[slot] === 1;
  }

  /** git's verify_uptodate: a file deleted from the worktree loses nothing when replaced. */
  uptodate(r: number): boolean {
    return this.cleanAt(r) || this.kindAt(r) === KIND_ABSENT;
  }

  /**
   * Whether the worktree's fresh stat data (probe slot) is still index entry i's: git
   * smudges a kept entry's size only then (racily clean: the stat data matches, the content
   * does not); a file whose stat data changed keeps its entry as it was.
   */
  statSame(slot: number, i: number): boolean {
    const kind = this.found.kind(slot);
    if (kind !== KIND_FILE && kind !== KIND_SYMLINK) return false;
    return sameStatData(this.found.stats, slot, this.index!.stats, i);
  }
}

/** Parent directories of a latin1 path, nearest first. */
export function* ancestors(path: string): Generator<string> {
  for (let s = path.lastIndexOf('/'); s > 0; s = path.lastIndexOf('/', s - 1))
    yield path.slice(0, s);
}

let identityRows = new Int32Array(0);
/** 0, 1, … count - 1 (shared, grown as needed: copy it, never write to it). */
export function identity(count: number): Int32Array {
  if (identityRows.length < count) {
    identityRows = new Int32Array(Math.max(count, 2 * identityRows.length));
    for (let k = 0; k < identityRows.length; k++) identityRows[k] = k;
  }
  return identityRows.subarray(0, count);
}

/** Whether every byte of a typed array is zero (one memcmp against a zeroed buffer). */
export function allZero(a: Uint16Array): boolean {
  const bytes = bytesOf(a);
  return bytes.equals(Buffer.alloc(bytes.length));
}
