/**
 * Phase 1, open: the settings resolved once against the repository's config (lower layers take
 * them as they are and never default), the current index read, the mode chosen, the revision
 * resolved, and the locks taken (index.lock, then HEAD.lock when HEAD moves). A dry run takes
 * no lock.
 */
import { availableParallelism } from 'node:os';
import { readdirSync } from 'node:fs';
import { loadAddon, type Addon, type NativeOdb } from '../addon.js';
import { PcheckoutError, fromSystem } from '../errors.js';
import { readIndex, type IndexFile } from '../index/read.js';
import { expandIndex } from '../index/sparse.js';
import { splitConfig, type SplitConfig } from '../index/split-write.js';
import { killPoint } from '../kill-point.js';
import { LockFile } from '../lock.js';
import { MAX_WORKERS } from '../options.js';
import type { Mode } from '../plan/plan.js';
import { pathProtection } from '../plan/paths.js';
import { indexIdentity, type WorktreeWatch } from '../plan/watch.js';
import { HeadUpdate } from '../repo/head.js';
import { Refs, resolveRevision, type RefValue, type Resolved } from '../repo/refs.js';
import type { Repo } from '../repo/repo.js';
import type { Resources, Store } from '../resources.js';
import { fsyncFromConfig } from '../settings.js';
import type { FsyncMode } from '../write/durability.js';
import { detectFilesystem, type FilesystemInfo } from '../write/filesystem.js';
import { WorktreeDir } from '../worktree.js';
import type { Job } from './job.js';

const DEFAULT_THRESHOLD = 100;
// On a network filesystem each create, write and close waits for the server, so more writers
// than cores pay: 16 (git's NFS prototype used 16). Measured with bench/netfs.mjs (sshfs, client
// and server sharing 2 cores; docs/filesystems.md "Network filesystems"): with native writer threads 8–32 are
// within a few percent of each other and 2–4 up to 1.5x slower.
const NETWORK_WORKERS = 16;
// There each lstat of the probe waits for the server too: a thread for every few dozen paths
// (on a local disk the addon's default, thousands, where an lstat takes microseconds).
const NETWORK_PATHS_PER_THREAD = 32;
// There creates in one directory wait for its lock: at most this many writers share one.
// bench/netfs.mjs at 1 ms RTT (batlike, its largest directory 200 files): 1 was the slowest,
// 4 a little ahead of 2.
const NETWORK_PER_DIR = 4;

/** The call's settings, resolved once from options and config: nothing below defaults again. */
export interface CallConfig {
  readonly filesystem: FilesystemInfo;
  readonly fsync: FsyncMode;
  readonly workers: number;
  /** Parallel writers in one directory at a time (0: no limit; a network filesystem has one). */
  readonly perDir: number;
  /** Paths for each thread of the worktree probe (0: the addon's default). */
  readonly probePerThread: number;
  readonly threshold: number;
  /** core.symlinks and core.filemode. */
  readonly symlinks: boolean;
  readonly fileMode: boolean;
}

/**
 * The worker count in force: the option, else checkout.workers, else the cores (more on a
 * network filesystem). < 1 means one per core, as with git; whatever the source, at most
 * MAX_WORKERS (the pool then starts no more threads than there are chunks).
 */
function configuredWorkers(repo: Repo, explicit: number | undefined, fs: FilesystemInfo): number {
  const cores = availableParallelism();
  const fromConfig = explicit === undefined ? repo.config.getInt('checkout.workers') : undefined;
  const wanted = explicit ?? fromConfig;
  if (wanted === undefined) {
    return fs.network ? Math.min(NETWORK_WORKERS, MAX_WORKERS) : cores;
  }
  return Math.min(wanted < 1 ? cores : wanted, MAX_WORKERS);
}

/** Before any lock is taken: a bad config value must not leave index.lock behind. */
export function resolveConfig(job: Job): CallConfig {
  const { settings, repo } = job;
  // A dry run into a directory not made yet: the filesystem it would be made on.
  const filesystem = detectFilesystem(job.worktree);
  return Object.freeze({
    filesystem,
    fsync: settings.fsync ?? fsyncFromConfig(repo.config.get('pcheckout.fsync')) ?? 'none',
    workers: configuredWorkers(repo, settings.workers, filesystem),
    perDir: filesystem.network ? NETWORK_PER_DIR : 0,
    probePerThread: filesystem.network ? NETWORK_PATHS_PER_THREAD : 0,
    threshold:
      settings.threshold ??
      repo.config.getInt('checkout.thresholdforparallelism') ??
      DEFAULT_THRESHOLD,
    symlinks: repo.config.getBool('core.symlinks') ?? true,
    fileMode: repo.config.getBool('core.filemode') ?? true,
  });
}

/** Whether a directory holds nothing but `.git` (a directory not made yet holds nothing). */
function emptyWorktree(dir: string): boolean {
  try {
    return readdirSync(dir).every((n) => n === '.git');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw fromSystem(err, 'read', dir);
  }
}

function chooseMode(job: Job, index: IndexFile | null): Mode {
  const { settings } = job;
  const noRef = settings.ref === undefined;
  if (settings.restore || (settings.paths && noRef && !job.materialize)) {
    if (index === null) {
      throw new PcheckoutError(
        'ERR_INVALID_OPTION',
        `nothing to restore: ${job.worktree} has no index (check out a revision first)`,
      );
    }
    return 'restore';
  }
  if (settings.paths && !job.materialize) return 'paths';
  if (index === null && emptyWorktree(job.worktree)) return 'fresh';
  return settings.force || job.materialize ? 'force' : 'switch';
}

/** What the open phase hands on. */
export interface Opened {
  readonly addon: Addon;
  readonly mode: Mode;
  /** The index as it is (null: none); a sparse index expanded (index/sparse.ts). */
  readonly current: IndexFile | null;
  /** Whether the new index is written split, and how (core.splitIndex, splitIndex.*). */
  readonly split: SplitConfig;
  readonly store: Store;
  readonly odb: NativeOdb;
  /** The worktree as a directory handle (null: a dry run into a directory not made yet). */
  readonly worktree: WorktreeDir | null;
  readonly watch: WorktreeWatch | null;
  /** Per index entry, 1 where a warm engine's watch vouches for it. */
  readonly knownClean: Uint8Array | null;
  readonly refs: Refs;
  /** The revision checked out (null: a restore). */
  readonly target: Resolved | null;
  readonly headBefore: RefValue | undefined;
  readonly oldOid: string | undefined;
  /** The locks held (none in a dry run); released by `release`, whatever happens. */
  readonly indexLock: LockFile | null;
  readonly headUpdate: HeadUpdate | null;
  /**
   * A warm engine's worktree where nothing happened since its last call left it exactly this
   * call's tree (plan/watch.ts `settledFor`): the index's entry count, all vouched for; the call
   * has nothing to read, plan or write (null: the usual call).
   */
  readonly settled: { readonly entries: number } | null;
}

/** Whether the watch says this checkout has nothing to do, before the index is even read. */
function settledState(
  job: Job,
  watch: WorktreeWatch | null,
  refs: Refs,
  odb: NativeOdb,
): { target: Resolved; entries: number } | null {
  const { settings, repo } = job;
  // Only a whole checkout of a revision; a sparse checkout's patterns are a file the watch
  // does not see (.git/info/sparse-checkout).
  if (settings.restore || settings.paths) return null;
  if (repo.config.getBool('core.sparsecheckout') === true) return null;
  // core.splitIndex turned on since: the index is written again, split.
  if (splitConfig(repo.config, null, job.materialize).split) return null;
  if (watch === null || !watch.recordedSettled) return null;
  const target = resolveRevision(refs, odb, settings.ref, { allowTree: job.materialize });
  const entries = watch.settledFor(indexIdentity(job.indexPath), target.tree);
  return entries === null ? null : { target, entries };
}

/** Opens the call: index, mode, revision, locks. `release` must be called when the call ends. */
export function open(job: Job, config: CallConfig, resources: Resources): Opened {
  const { settings, repo } = job;
  const addon = loadAddon();
  const dry = settings.dryRun;
  const indexLock = dry ? null : new LockFile(job.indexPath, 'ERR_INDEX_LOCKED', repo.shared);
  let headUpdate: HeadUpdate | null = null;
  let worktree: WorktreeDir | null = null;
  try {
    const store = resources.store(repo.objectDirs);
    addon.decodeStats(store.opened()); // a warm engine's readers start this checkout's record
    const refs = new Refs(repo);
    // Read before planning: what changed since the previous call (a warm engine only). A call
    // that is not a dry run always has its worktree (made if need be).
    const kept = dry ? null : resources.watch(job.worktree, config.filesystem);
    const settled = dry ? null : settledState(job, kept, refs, store.odb);
    const read = settled ? null : readIndex(job.indexPath);
    const mode = settled
      ? settings.force || job.materialize
        ? 'force'
        : 'switch'
      : chooseMode(job, read);
    const split = splitConfig(repo.config, read, job.materialize);
    // A sparse index is planned with as the full index git's ensure_full_index makes of it.
    const current = read && expandIndex(store.odb, read, pathProtection(repo.config));
    const exists = !dry || !(mode === 'fresh' && current === null && !dirExists(job.worktree));
    worktree = exists && !settled ? new WorktreeDir(addon, job.worktree) : null;
    const watch = dry && exists ? resources.watch(job.worktree, config.filesystem) : kept;
    const knownClean = settled
      ? null
      : (watch?.knownClean(
          current?.entries ?? null,
          current ? indexIdentity(job.indexPath) : null,
        ) ?? null);
    const target =
      settled?.target ??
      (mode === 'restore'
        ? null
        : resolveRevision(refs, store.odb, settings.ref, { allowTree: job.materialize }));
    const moveHead = !job.materialize && mode !== 'paths' && target !== null && !target.keepHead;
    const headBefore = refs.read('HEAD');
    const oldOid = refs.resolve('HEAD');
    if (moveHead && !dry) headUpdate = new HeadUpdate(refs, target);
    killPoint();
    return {
      addon,
      mode,
      current,
      split,
      store,
      odb: store.odb,
      worktree,
      watch,
      knownClean,
      refs,
      target,
      headBefore,
      oldOid,
      indexLock,
      headUpdate,
      settled: settled ? { entries: settled.entries } : null,
    };
  } catch (err) {
    headUpdate?.rollback();
    indexLock?.rollback();
    worktree?.close();
    throw err;
  }
}

function dirExists(path: string): boolean {
  try {
    return readdirSync(path) !== null;
  } catch {
    return false;
  }
}

/**
 * Gives back the memory of the index read, for when no later phase reads it: its entries once
 * the call is planned, its stat data once the writes have gathered the kept entries' (the write
 * phase, Plan.keptStats). A million entries hold ~80 MB of entries and 40 MB of stat data, which
 * counted at a switch's peak until the call ended. Arrays that `keep` shares (the plan's result
 * may be the index's entries whole) stay. The raw file (a mapping, its pages already dropped)
 * stays too: the index phase compares with it. After this, `opened.current`'s released arrays
 * are empty.
 */
export function releaseIndexRead(
  opened: Opened,
  part: 'entries' | 'stats',
  keep: readonly ArrayBufferView[],
): void {
  const read = opened.current;
  if (read === null) return;
  const { entries } = read;
  const views: ArrayBufferView[] =
    part === 'stats'
      ? [read.stats]
      : [
          entries.paths,
          entries.oids,
          entries.modes,
          entries.starts,
          read.stages,
          read.extFlags,
          read.assumeValid,
          read.offsets,
        ];
  const kept = new Set(keep.map((v) => v.buffer));
  opened.addon.releaseArrays(views.filter((v) => !kept.has(v.buffer)));
}

/** Whatever happened: locks not committed are rolled back, the directory handle closed. */
export function release(opened: Opened | null): void {
  opened?.headUpdate?.rollback();
  opened?.indexLock?.rollback();
  opened?.worktree?.close();
}
