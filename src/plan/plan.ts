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
 *
 * The pieces: stage.ts joins the index, HEAD's tree and the target into rows and looks at the
 * worktree where a decision needs it; one planner per mode (fresh.ts, twoway.ts, oneway.ts,
 * restore.ts, checkout-paths.ts) decides each row into decisions.ts, the pathspec and sparse
 * filters (filters.ts) applying there; finish.ts makes the Plan of them.
 */
import type { NativeOdb } from '../addon.js';
import { checkoutPathsPlanner } from './checkout-paths.js';
import { assertMerged } from './conflicts.js';
import type { EntryList } from './entries.js';
import { finishPlan } from './finish.js';
import type { FileTask } from './locate.js';
import { forcePlanner } from './oneway.js';
import type { ProbeRequest, ProbeResult } from './probe.js';
import { freshPlanner } from './fresh.js';
import { restorePlanner } from './restore.js';
import { Stage, type Planner } from './stage.js';
import { switchPlanner } from './twoway.js';

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
  /** At least this many paths for each of those threads (absent: the addon's default). */
  probePerThread?: number;
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
  /** Throws once the call is aborted: looked at between the plan's long steps and inside them. */
  check?: () => void;
}

/**
 * Per result entry: from which list (src: 0 the index, 1 the target) and position (idx) it
 * comes, its slot in the probe's stat data when it was hashed clean (freshSlot, else -1), and
 * whether its recorded size is zeroed (smudge: racy, kept unhashed); `old` the index's stat data,
 * `fresh` the probe's.
 */
export interface KeptStats {
  src: Uint8Array;
  idx: Int32Array;
  freshSlot: Int32Array;
  smudge: Uint8Array;
  old: Uint32Array;
  fresh: Uint32Array;
}

export interface Plan {
  mode: Mode;
  /** The index to write, in order. */
  result: EntryList;
  /**
   * Where the kept entries' stat data comes from: the write phase gathers it into the array
   * its writers fill (written and new entries have none until then), so that the index's stat
   * data is made once, not gathered here and merged again after the writes (two arrays of
   * 40 MB at a million entries, at the checkout's peak).
   */
  keptStats: KeptStats;
  /** The extended flags carried over from the old index (skip-worktree, intent-to-add). */
  extFlags: Uint16Array;
  /** Per result entry: 1 when this checkout writes it. */
  write: Uint8Array;
  /** Per result entry: 1 when a file or symlink at its path must be unlinked first. */
  replace: Uint8Array;
  /** Regular files to write (result positions) in pack order; those in `missing` left out. */
  files: FileTask[];
  /**
   * Files and symlinks to write (result positions) whose blobs the repository lacks: a
   * partial clone's, fetched before the write (run/fetch.ts), which then locates them.
   */
  missing: number[];
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
   * written, or was found or known clean); null for a checkout of paths, and for a switch
   * without a warm engine's watch (it looks at what it changes; with a watch, what the watch
   * vouched for is carried over). What a warm engine's watch records.
   */
  verified: Uint8Array | null;
}

const PLANNERS: Record<Mode, Planner> = {
  fresh: freshPlanner,
  switch: switchPlanner,
  force: forcePlanner,
  restore: restorePlanner,
  paths: checkoutPathsPlanner,
};

/** Decides every path, probing the worktree where the decision depends on it. */
export async function makePlan(odb: NativeOdb, input: PlanInput): Promise<Plan> {
  const planner = PLANNERS[input.mode];
  if (input.index && planner.mergedOnly) assertMerged(input.index);
  const stage = new Stage(input, planner.joins);
  return finishPlan(odb, stage, await planner.plan(stage));
}
