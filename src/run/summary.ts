/**
 * What a call returns: the hand-offs of its phases read into one plain object (data only: it
 * crosses from an orchestrator thread to the caller's by structured clone).
 */
import type { NativeDecodeStats } from '../addon.js';
import type { ErrorCode } from '../errors.js';
import type { HookResult } from '../hooks.js';
import type { RacyDecision } from '../index/racy.js';
import type { Mode } from '../plan/plan.js';
import type { FsyncSummary } from '../write/durability.js';
import type { FilterFailure } from '../write/filters.js';
import type { FilesystemInfo } from '../write/filesystem.js';
import type { StoreSummary } from '../write/store.js';
import type { Changes } from './changes.js';

/** What stops a checkout, as a dry run reports it instead of throwing. */
export interface Stops {
  code: ErrorCode;
  message: string;
  /** Every path named, sorted. */
  paths: string[];
  /** Of those: tracked files with local changes the checkout would overwrite. */
  modified: string[];
  /** Untracked files it would overwrite or remove, and directories whose untracked files it would lose. */
  untracked: string[];
}

export interface CheckoutSummary {
  /**
   * fresh (empty worktree, no index), switch (git checkout), force (git checkout -f), restore
   * (from the index), paths (git checkout <rev> -- <paths>), materialize.
   */
  mode: Mode | 'materialize';
  /** A dry run: nothing was touched; the counts and `changes` are what the call would do. */
  dryRun: boolean;
  /** The commit checked out, or null when a tree was given (or for a restore). */
  commit: string | null;
  tree: string | null;
  /** HEAD's branch afterwards (e.g. refs/heads/main), or null when HEAD is detached. */
  ref: string | null;
  detached: boolean;
  /** Entries in the index written. */
  entries: number;
  /** Worktree entries created, rewritten (content, mode or type) and removed. */
  created: number;
  updated: number;
  deleted: number;
  /** The paths changed (with `changes: true`, and always in a dry run; else null). */
  changes: Changes | null;
  /** A dry run's verdict: what would refuse the checkout (else null; a real call throws it). */
  stops: Stops | null;
  /** Regular files written. */
  files: number;
  symlinks: number;
  gitlinks: number;
  /** Bytes of regular-file content written. */
  bytes: number;
  /**
   * A partial clone's missing blobs fetched before the write (in a dry run: the ones it would
   * fetch, `ms` 0), from which promisor remote (a dry run: the first git would ask) and in how
   * long; null when none was missing.
   */
  fetched: { blobs: number; remote: string; ms: number } | null;
  /** Whether the writes ran on the pool, its threads, and the files it wrote. */
  pool: { used: boolean; workers: number; files: number };
  /**
   * Files written through external filter drivers (on the orchestrating thread), how many of
   * those a process filter delayed, and the failures of drivers that are not required (those
   * files are left unfiltered, as git leaves them; git prints each as an error).
   */
  filters: {
    files: number;
    delayed: number;
    failed: FilterFailure[];
  };
  /** The worker count in force (option, config or cores) and the threshold in force. */
  workers: number;
  threshold: number;
  inflater: 'libdeflate' | 'zlib';
  /** Whether files are opened with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH) (probed once per process; else a component-by-component O_NOFOLLOW walk). */
  openat2: boolean;
  /** Paths that collided with another entry (e.g. case-insensitive filesystems), sorted. */
  collisions: string[];
  /** The racy-git decision: entries written in the index's second, their bytes, and whether it waited. */
  racy: RacyDecision;
  /** The branch created from a remote-tracking branch (checkout.guess), with its upstream. */
  newBranch: { name: string; upstream: string | null } | null;
  /** The post-checkout hook's exit status, or null when none ran. */
  hook: HookResult | null;
  /**
   * The store of worktree-ready files (the `store` option): how files moved (reflink, copy,
   * write), how many were imported, added, found damaged and rewritten, pruned; null without one.
   */
  store: StoreSummary | null;
  /** The fsync mode in force, the barrier it took (none, syncfs, fsync of paths) and its time. */
  fsync: FsyncSummary;
  /** The filesystem under the worktree; a network one gets more workers by default. */
  filesystem: FilesystemInfo;
  /** git's warnings for this checkout (attribute files skipped, files that failed to encode). */
  warnings: string[];
  /** Objects inflated and deltas applied by all readers (planning and every thread). */
  decoded: NativeDecodeStats;
  /**
   * A warm engine's watch of the worktree: whether one is kept, and how many index entries it
   * vouched for, so that they were not looked at (see createEngine's `watch`); `stopped`: why
   * it stopped for good and vouches for nothing (the kernel's inotify limit, say), else null;
   * `settled`: the last call left the index and worktree exactly this tree and nothing happened
   * since, so nothing was read, planned or written.
   */
  watch: { active: boolean; known: number; settled: boolean; stopped: string | null };
  /** Milliseconds per phase. */
  timings: {
    plan: number;
    /** The fetch of a partial clone's missing blobs (0 when none). */
    fetch: number;
    write: number;
    index: number;
    total: number;
    racyWait: number;
  };
}

export function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

export function countKnown(known: Uint8Array | null): number {
  let n = 0;
  if (known) for (let i = 0; i < known.length; i++) n += known[i]!;
  return n;
}

export function displayFailure(f: FilterFailure): FilterFailure {
  return { ...f, path: Buffer.from(f.path, 'latin1').toString('utf8') };
}
