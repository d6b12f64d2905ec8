import { availableParallelism } from 'node:os';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadAddon, type NativeOdb } from './addon.js';
import { PcheckoutError, fromNative, fromSystem, isErrorCode } from './errors.js';
import { readIndex, type IndexFile } from './index/read.js';
import {
  decideRacyWait,
  leaveRacySecond,
  newestMtime,
  type RacyDecision,
  type RacyPolicy,
} from './index/racy.js';
import { STAT_WORDS, buildIndex } from './index/write.js';
import { LockFile } from './lock.js';
import {
  invalidOption,
  optionalBoolean,
  optionalFunction,
  optionalInteger,
  optionalSignal,
  optionalString,
} from './options.js';
import { assertNoConversions } from './plan/attributes.js';
import { EntryList } from './plan/entries.js';
import { Excludes } from './plan/ignore.js';
import { makePlan, type Mode, type Plan } from './plan/plan.js';
import { probe } from './plan/probe.js';
import { walkTree } from './plan/tree.js';
import { ZERO_OID, commitTree, readObject } from './repo/objects.js';
import { Refs, resolveRevision, type Resolved } from './repo/refs.js';
import { openRepo, type Repo } from './repo/repo.js';
import { removeBranchState } from './repo/state.js';
import { syncBarrier, writerSync, type FsyncMode, type FsyncSummary } from './write/durability.js';
import { execute } from './write/execute.js';
import { detectFilesystem, type FilesystemInfo } from './write/filesystem.js';
import { WorkerPool } from './write/pool.js';
import type { Progress } from './write/write.js';

export type { Progress } from './write/write.js';
export type { Mode } from './plan/plan.js';
export type { FsyncMode, FsyncSummary } from './write/durability.js';
export type { FilesystemInfo } from './write/filesystem.js';

export interface CheckoutOptions {
  /** A branch, tag, object id (full or abbreviated), or `rev~n` / `rev^{tree}`; default: HEAD. */
  ref?: string;
  /**
   * Overwrite local changes and untracked files in the way, as `git checkout -f`; without a
   * ref, reset the index and worktree to HEAD. Also brings a half-written worktree (a killed
   * checkout) to the exact target.
   */
  force?: boolean;
  /** Make the worktree match the index, as `git checkout-index -a -f` (no ref). */
  restore?: boolean;
  /**
   * Worker threads for the pool; 0 = one per core. Default: `checkout.workers`, else one per core
   * (twice the cores, at most 16, on a network filesystem).
   */
  workers?: number;
  /** Use the pool only above this many entries. Default: `checkout.thresholdForParallelism`, else 100. */
  threshold?: number;
  /** Called as files finish (per chunk). */
  onProgress?: (progress: Progress) => void;
  /** Stops handing out work; files written so far stay, no index is written. */
  signal?: AbortSignal;
  /**
   * git trusts an entry's stat data only if the index is from a later second than the file
   * ("racy git"); otherwise it re-reads and hashes the file on its next look. `'auto'` (the
   * default) waits for the clock to leave the second of the newest file (at most ~1 s) only when
   * git's re-hash of the files written in that second would cost more than the wait; `true` /
   * `'always'` always waits, `false` / `'never'` never does.
   */
  racyWait?: boolean | RacyPolicy;
  /**
   * Durability of the worktree before the index is committed: `'none'`, `'file'` (fsync each
   * file and changed directory) or `'batch'` (writeback started per file, one barrier). Default:
   * the `pcheckout.fsync` config key, else `'none'`. See the README for what each guarantees.
   */
  fsync?: FsyncMode;
}

export interface CheckoutSummary {
  /** fresh (empty worktree, no index), switch (git checkout), force (git checkout -f), restore. */
  mode: Mode;
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
  /** Regular files written. */
  files: number;
  symlinks: number;
  gitlinks: number;
  /** Bytes of regular-file content written. */
  bytes: number;
  /** Whether the writes ran on the pool, and its threads. */
  pool: { used: boolean; workers: number };
  /** The worker count in force (option, config or cores) and the threshold in force. */
  workers: number;
  threshold: number;
  inflater: 'libdeflate' | 'zlib';
  /** Paths that collided with another entry (e.g. case-insensitive filesystems), sorted. */
  collisions: string[];
  /** The racy-git decision: entries written in the index's second, their bytes, and whether it waited. */
  racy: RacyDecision;
  /** The fsync mode in force, the barrier it took (none, syncfs, fsync of paths) and its time. */
  fsync: FsyncSummary;
  /** The filesystem under the worktree; a network one gets more workers by default. */
  filesystem: FilesystemInfo;
  /** Milliseconds per phase. */
  timings: { plan: number; write: number; index: number; total: number; racyWait: number };
}

const DEFAULT_THRESHOLD = 100;
// On a network filesystem each create, write and close waits for the server, so more writers
// than cores pay: twice the cores, at most 16 (git's NFS prototype used 16). Measured with
// bench/netfs.mjs (sshfs, client and server sharing 2 cores): 2–4 workers best, 8 and 16 slower,
// as the threads then compete with the server for the CPU.
const NETWORK_WORKERS_PER_CORE = 2;
const MAX_NETWORK_WORKERS = 16;
const FSYNC_MODES: readonly FsyncMode[] = ['none', 'file', 'batch'];
const CACHE_BYTES = 32 * 1024 * 1024; // delta-base cache per reader (main thread, each worker)
const STREAM_THRESHOLD = 100 * 1024 * 1024; // larger blobs are streamed to disk, not held whole

interface Settings {
  ref: string | undefined;
  force: boolean;
  restore: boolean;
  workers: number | undefined;
  threshold: number | undefined;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  racyWait: RacyPolicy;
  fsync: FsyncMode | undefined;
}

function fsyncMode(name: string, value: unknown): FsyncMode | undefined {
  if (value === undefined) return undefined;
  if (!FSYNC_MODES.includes(value as FsyncMode)) {
    throw invalidOption(name, "'none', 'file' or 'batch'", value);
  }
  return value as FsyncMode;
}

function racyPolicy(value: unknown): RacyPolicy {
  if (value === undefined || value === 'auto') return 'auto';
  if (value === true || value === 'always') return 'always';
  if (value === false || value === 'never') return 'never';
  throw invalidOption('racyWait', "a boolean or 'auto', 'always', 'never'", value);
}

function validate(repoPath: unknown, options: unknown): Settings {
  if (typeof repoPath !== 'string' || repoPath === '') {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `Expected a non-empty string for repoPath but received ${String(repoPath)}`,
    );
  }
  if (options === null || typeof options !== 'object') {
    throw new PcheckoutError('ERR_INVALID_OPTION', 'Expected an object for options');
  }
  const o = options as Record<string, unknown>;
  const settings: Settings = {
    ref: optionalString('ref', o['ref']),
    force: optionalBoolean('force', o['force']) ?? false,
    restore: optionalBoolean('restore', o['restore']) ?? false,
    workers: optionalInteger('workers', o['workers'], 0, 1024),
    threshold: optionalInteger('threshold', o['threshold'], 0),
    onProgress: optionalFunction<(p: Progress) => void>('onProgress', o['onProgress']),
    signal: optionalSignal('signal', o['signal']),
    racyWait: racyPolicy(o['racyWait']),
    fsync: fsyncMode('fsync', o['fsync']),
  };
  if (settings.restore && settings.ref !== undefined) {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `Expected no ref with option restore (it restores from the index) but received '${settings.ref}'`,
    );
  }
  return settings;
}

function aborted(): PcheckoutError {
  return new PcheckoutError('ERR_ABORTED', 'the checkout was aborted');
}

/** Whether the worktree holds nothing but `.git`. */
function worktreeEmpty(repo: Repo): boolean {
  try {
    return readdirSync(repo.worktree).every((n) => n === '.git');
  } catch (err) {
    throw fromSystem(err, 'read', repo.worktree);
  }
}

function chooseMode(settings: Settings, index: IndexFile | null, repo: Repo): Mode {
  if (settings.restore) {
    if (index === null) {
      throw new PcheckoutError(
        'ERR_INVALID_OPTION',
        `nothing to restore: ${repo.worktree} has no index (check out a revision first)`,
      );
    }
    return 'restore';
  }
  if (index === null && worktreeEmpty(repo)) return 'fresh';
  return settings.force ? 'force' : 'switch';
}

function configuredWorkers(repo: Repo, explicit: number | undefined, fs: FilesystemInfo): number {
  const cores = availableParallelism();
  if (explicit !== undefined) return explicit < 1 ? cores : explicit;
  const fromConfig = repo.config.getInt('checkout.workers');
  if (fromConfig === undefined) {
    return fs.network ? Math.min(MAX_NETWORK_WORKERS, NETWORK_WORKERS_PER_CORE * cores) : cores;
  }
  return fromConfig < 1 ? cores : fromConfig;
}

/** The tree HEAD points at now (empty when HEAD is unborn): the "old tree" of a switch. */
function headTree(refs: Refs, odb: NativeOdb): EntryList {
  const oid = refs.resolve('HEAD');
  if (oid === undefined) {
    return new EntryList({
      count: 0,
      paths: Buffer.alloc(0),
      oids: Buffer.alloc(0),
      modes: new Uint32Array(0),
    });
  }
  const commit = readObject(odb, oid);
  return walkTree(odb, commit.type === 'commit' ? commitTree(commit.data, oid) : oid);
}

/** Starts the pool on first use. */
class LazyPool {
  private pool: WorkerPool | null = null;
  private starting: Promise<WorkerPool> | null = null;

  constructor(
    private readonly workers: number,
    private readonly repo: Repo,
  ) {}

  get started(): WorkerPool | null {
    return this.pool;
  }

  async get(): Promise<WorkerPool> {
    this.starting ??= WorkerPool.start(this.workers, {
      objectDirs: this.repo.objectDirs,
      cacheBytes: CACHE_BYTES,
    }).then((pool) => (this.pool = pool));
    return this.starting;
  }

  async destroy(): Promise<void> {
    await (this.starting ?? Promise.resolve(null)).then(
      (pool) => pool?.destroy(),
      () => {},
    );
  }
}

/** The new index: the plan's kept entries with their stat data, the written ones with fresh. */
function mergedStats(plan: Plan, written: Uint32Array): Uint32Array {
  const stats = plan.stats.slice();
  for (let k = 0; k < plan.result.count; k++) {
    if (plan.write[k] === 1)
      stats.set(written.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS), k * STAT_WORDS);
  }
  return stats;
}

/**
 * Checks out a revision into a repository's worktree and writes its index — a fresh checkout,
 * a switch, a forced checkout or a restore from the index: the API behind `pcheckout`.
 */
export async function checkout(
  repoPath: string,
  options: CheckoutOptions = {},
): Promise<CheckoutSummary> {
  const settings = validate(repoPath, options);
  const started = performance.now();
  if (settings.signal?.aborted) throw aborted();
  const addon = loadAddon();
  const repo = openRepo(repoPath);
  // Before the lock is taken: a bad config value must not leave index.lock behind.
  const filesystem = detectFilesystem(repo.worktree);
  const fsync =
    settings.fsync ??
    fsyncMode('pcheckout.fsync (config)', repo.config.get('pcheckout.fsync')) ??
    'none';
  const indexPath = join(repo.gitDir, 'index');
  const indexLock = new LockFile(indexPath, 'ERR_INDEX_LOCKED');
  let headLock: LockFile | undefined;
  let odb: NativeOdb | undefined;
  const workers = configuredWorkers(repo, settings.workers, filesystem);
  const threshold =
    settings.threshold ??
    repo.config.getInt('checkout.thresholdforparallelism') ??
    DEFAULT_THRESHOLD;
  const pool = new LazyPool(workers, repo);
  try {
    // Open the repository: the current index, the target, and HEAD's lock.
    const current = readIndex(indexPath);
    const mode = chooseMode(settings, current, repo);
    try {
      odb = new addon.Odb(repo.objectDirs, CACHE_BYTES);
    } catch (err) {
      throw fromNative(err, 'cannot open the object database');
    }
    const refs = new Refs(repo);
    const target: Resolved | null =
      mode === 'restore' ? null : resolveRevision(refs, odb, settings.ref);
    const headBefore = refs.read('HEAD');
    const oldOid = refs.resolve('HEAD');
    if (target && !target.keepHead) {
      headLock = refs.lockHead(
        target.branch !== null ? { branch: target.branch } : { oid: target.commit! },
      );
    }

    // Plan: target entries, the two-way merge against index and worktree, blobs located.
    const targetEntries = target ? walkTree(odb, target.tree) : null;
    // Until conversions land: refuse what would need one, on the way out (the current index's
    // attributes, for the dirty check) or in (the target's).
    if (current) assertNoConversions(repo, odb, current.entries);
    if (targetEntries) assertNoConversions(repo, odb, targetEntries);
    const plan = await makePlan(odb, {
      mode,
      root: repo.worktree,
      target: targetEntries,
      index: current,
      head: mode === 'switch' && current !== null ? headTree(refs, odb) : null,
      fileMode: repo.config.getBool('core.filemode') ?? true,
      probeThreads: workers,
      threshold,
      isIgnored: lazyExcludes(repo),
      probe: async (req) => probe(addon, req),
    });
    const usePool = workers > 1 && plan.files.length > threshold;
    // The trees' bases are of no use to the file writers; with a pool this reader sits idle.
    if (usePool) odb.releaseCache();
    const planned = performance.now();
    if (settings.signal?.aborted) throw aborted();

    // Write: removals, directories, files (in process or on the pool), links.
    const outcome = await execute(odb, plan, {
      root: repo.worktree,
      pool: usePool ? await pool.get() : null,
      streamThreshold: STREAM_THRESHOLD,
      sync: writerSync(fsync),
      concurrentDirs: filesystem.network,
      symlinks: repo.config.getBool('core.symlinks') ?? true,
      onProgress: settings.onProgress,
      signal: settings.signal,
    });
    if (settings.signal?.aborted) throw aborted();
    if (outcome.failures.length > 0) {
      const first = outcome.failures[0]!;
      const { result } = plan;
      throw new PcheckoutError(
        isErrorCode(first.code) ? first.code : 'ERR_WRITE_FAILED',
        `${outcome.failures.length} file(s) could not be written; first: ${result.display(first.index)}: ${first.message}`,
        { path: result.display(first.index), oid: result.oidHex(first.index) },
      );
    }
    // Every write and removal durable (per the mode) before the index says they happened.
    const durability = syncBarrier(addon, plan, {
      root: repo.worktree,
      mode: fsync,
      fs: filesystem,
      threads: workers,
      symlinksAsFiles: !(repo.config.getBool('core.symlinks') ?? true),
    });
    const written = performance.now();

    // Finish: the index (after the racy-git wait), then HEAD.
    const index = buildIndex(plan.result, mergedStats(plan, outcome.stats), {
      extFlags: plan.extFlags,
    });
    const racy = decideRacyWait(settings.racyWait, outcome.stats);
    const waited = racy.waited ? await leaveRacySecond(outcome.stats) : 0;
    indexLock.write(index);
    if (racy.waited && indexLock.mtimeSeconds() <= newestMtime(outcome.stats)) {
      // The filesystem's clock is coarser than ours; stamp the index with the time it is now.
      indexLock.touch();
    }
    indexLock.commit(fsync !== 'none');
    if (headLock) {
      headLock.commit(fsync !== 'none');
      const from = headBefore?.symref?.replace(/^refs\/heads\//, '') ?? oldOid ?? ZERO_OID;
      refs.appendHeadLog(
        oldOid ?? ZERO_OID,
        target!.commit!,
        `checkout: moving from ${from} to ${settings.ref}`,
      );
    }
    if (mode === 'switch' || mode === 'force') removeBranchState(repo);
    const headAfter = refs.read('HEAD');
    const indexed = performance.now();
    return {
      mode,
      commit: target?.commit ?? null,
      tree: target?.tree ?? null,
      ref: headAfter?.symref ?? null,
      detached: headAfter?.symref === undefined,
      entries: plan.result.count,
      created: plan.counts.created,
      updated: plan.counts.updated,
      deleted: plan.counts.deleted,
      files: plan.files.length,
      symlinks: plan.symlinks.length,
      gitlinks: plan.gitlinks.length,
      bytes: outcome.bytes,
      pool: { used: usePool, workers: pool.started?.threads ?? 0 },
      workers,
      threshold,
      inflater: addon.inflater,
      collisions: outcome.collisions,
      racy,
      fsync: durability,
      filesystem,
      timings: {
        plan: round(planned - started),
        write: round(written - planned),
        index: round(indexed - written),
        total: round(indexed - started),
        racyWait: round(waited),
      },
    };
  } finally {
    await pool.destroy();
    headLock?.rollback();
    indexLock.rollback();
    odb?.close();
  }
}

/** git's exclude rules, loaded only if a decision needs them. */
function lazyExcludes(repo: Repo): (path: string, isDir: boolean) => boolean {
  let excludes: Excludes | undefined;
  return (path, isDir) => (excludes ??= new Excludes(repo)).isIgnored(path, isDir);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
