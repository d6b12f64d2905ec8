import { availableParallelism } from 'node:os';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAddon, type Addon, type NativeDecodeStats, type NativeOdb } from './addon.js';
import { Resources } from './resources.js';
import { descriptorHint } from './write/write.js';
import { PcheckoutError, fromSystem, isErrorCode } from './errors.js';
import { runHook, type HookResult } from './hooks.js';
import { readIndex, type IndexFile } from './index/read.js';
import { decideRacyWait, leaveRacySecond, newestMtime, type RacyDecision } from './index/racy.js';
import { indexVersion } from './index/version.js';
import { STAT_WORDS, buildIndex, patchIndex } from './index/write.js';
import { cacheTreeExtension } from './index/cache-tree.js';
import { killPoint } from './kill-point.js';
import { LockFile } from './lock.js';
import {
  checkinConversions,
  nativeCheckout,
  planConversions,
  type Conversions,
} from './plan/conversion.js';
import { readFilterDrivers } from './plan/drivers.js';
import { MAX_WORKERS } from './options.js';
import { EntryList } from './plan/entries.js';
import { Excludes } from './plan/ignore.js';
import { Pathspec } from './plan/pathspec.js';
import { inCone, readCone } from './plan/sparse.js';
import { assertSafePaths, pathProtection, type PathProtection } from './plan/paths.js';
import { makePlan, type Mode, type Plan } from './plan/plan.js';
import { probe } from './plan/probe.js';
import { lendIndex, walk, walkTree, type TreeWalk } from './plan/tree.js';
import { indexIdentity } from './plan/watch.js';
import { HeadUpdate } from './repo/head.js';
import { explainMissing } from './repo/incomplete.js';
import { ZERO_OID, commitTree, readObject } from './repo/objects.js';
import { Refs, resolveRevision, type Resolved } from './repo/refs.js';
import { openRepo, type Repo } from './repo/repo.js';
import { removeBranchState } from './repo/state.js';
import {
  fsyncFromConfig,
  validate,
  validateMaterialize,
  type CheckoutOptions,
  type MaterializeOptions,
  type Settings,
} from './settings.js';
import { syncBarrier, writerSync, type FsyncSummary } from './write/durability.js';
import { execute } from './write/execute.js';
import { checkoutRef, type FilterStepSettings } from './write/filtered.js';
import { FilterSession, type FilterFailure } from './write/filters.js';
import { detectFilesystem, type FilesystemInfo } from './write/filesystem.js';
import { WorktreeDir } from './worktree.js';
import { partWay, type PartWayContext } from './part-way.js';
import { claimTarget, MATERIALIZE_META } from './materialize-target.js';
export type { Progress } from './write/write.js';
export type { Mode } from './plan/plan.js';
export type { FsyncMode, FsyncSummary } from './write/durability.js';
export type { FilesystemInfo } from './write/filesystem.js';
export type { CheckoutOptions, MaterializeOptions } from './settings.js';

export interface CheckoutSummary {
  /**
   * fresh (empty worktree, no index), switch (git checkout), force (git checkout -f), restore
   * (from the index), paths (git checkout <rev> -- <paths>), materialize.
   */
  mode: Mode | 'materialize';
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
  /** Whether the writes ran on the pool, its threads, and the files it wrote. */
  pool: { used: boolean; workers: number; files: number };
  /**
   * Files written through external filter drivers (on the main thread), how many of those a
   * process filter delayed, and the failures of drivers that are not required (those files
   * are left unfiltered, as git leaves them; git prints each as an error).
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
   * vouched for, so that they were not looked at (see createEngine's `watch`).
   */
  watch: { active: boolean; known: number };
  /** Milliseconds per phase. */
  timings: { plan: number; write: number; index: number; total: number; racyWait: number };
}

const DEFAULT_THRESHOLD = 100;
// On a network filesystem each create, write and close waits for the server, so more writers
// than cores pay: 16 (git's NFS prototype used 16). Measured with bench/netfs.mjs (sshfs, client
// and server sharing 2 cores; README "Network filesystems"): with native writer threads 8–32 are
// within a few percent of each other and 2–4 up to 1.5x slower.
const NETWORK_WORKERS = 16;
const STREAM_THRESHOLD = 100 * 1024 * 1024; // larger blobs are streamed to disk, not held whole

/** The error of an aborted checkout; the signal's reason is its cause and named in the message. */
function aborted(signal: AbortSignal): PcheckoutError {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : reason === undefined ? '' : String(reason);
  return new PcheckoutError(
    'ERR_ABORTED',
    why === '' ? 'the checkout was aborted' : `the checkout was aborted: ${why}`,
    { cause: reason },
  );
}

/** What one run works on: a repository's own worktree and index, or a materialized directory. */
export interface Job {
  settings: Settings;
  repo: Repo;
  /** Where the files go. */
  worktree: string;
  /** The index that records what is there (in .git, or in the target's metadata directory). */
  indexPath: string;
  /** A materialize: HEAD, refs and merge state are left alone; metadata is written. */
  materialize: boolean;
  /** The path the repository was opened from (GIT_PREFIX for hooks). */
  start: string;
}

/** Whether a directory holds nothing but `.git`. */
function emptyWorktree(dir: string): boolean {
  try {
    return readdirSync(dir).every((n) => n === '.git');
  } catch (err) {
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

/** The tree HEAD points at now (empty when HEAD is unborn): the "old tree" of a switch. */
function headTree(
  refs: Refs,
  odb: NativeOdb,
  protect: PathProtection,
  indexHolds: { tree: string | null; entries: EntryList },
): EntryList {
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
  const tree = commit.type === 'commit' ? commitTree(commit.data, oid) : oid;
  // The index holds exactly HEAD's tree (its whole cache-tree lent): its entries are that walk.
  if (tree === indexHolds.tree) return indexHolds.entries;
  return walkTree(odb, tree, protect);
}

/**
 * The cache-tree of the new index, as git writes one after a checkout: from the walk of the
 * tree checked out, not valid above paths where the index differs from it. None for a checkout
 * of paths (most of the index is the old one) or a tree filtered by pathspecs.
 */
function cacheTree(
  mode: Mode,
  walked: TreeWalk | null,
  target: EntryList | null,
  plan: Plan,
): Buffer[] {
  // (A restore walks no tree: walked is null.)
  if (walked === null || target !== walked.entries || mode === 'paths') {
    return [];
  }
  return [cacheTreeExtension(walked.dirs, plan.result, walked.entries)];
}

/** The new index: the plan's kept entries with their stat data, the written ones with fresh. */
function mergedStats(plan: Plan, written: Uint32Array): Uint32Array {
  const stats = plan.stats.slice();
  const { write } = plan;
  for (let k = write.indexOf(1); k >= 0; k = write.indexOf(1, k + 1))
    stats.set(written.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS), k * STAT_WORDS);
  return stats;
}

/**
 * One checkout as a short script of phases: open (index, target, locks), plan, write, finish
 * (index, HEAD or metadata).
 */
export async function run(job: Job, resources: Resources): Promise<CheckoutSummary> {
  const { settings, repo } = job;
  const started = performance.now();
  if (settings.signal?.aborted) throw aborted(settings.signal);
  const addon = loadAddon();
  // Before the lock is taken: a bad config value must not leave index.lock behind.
  const filesystem = detectFilesystem(job.worktree);
  const fsync = settings.fsync ?? fsyncFromConfig(repo.config.get('pcheckout.fsync')) ?? 'none';
  const workers = configuredWorkers(repo, settings.workers, filesystem);
  const threshold =
    settings.threshold ??
    repo.config.getInt('checkout.thresholdforparallelism') ??
    DEFAULT_THRESHOLD;
  const indexLock = new LockFile(job.indexPath, 'ERR_INDEX_LOCKED', repo.shared);
  let headUpdate: HeadUpdate | undefined;
  let worktree: WorktreeDir | undefined;
  let partWayContext: PartWayContext | null = null;
  // External filters run from the worktree's top, as git runs them; a materialized directory is
  // no repository, so they are told where it is (as git --git-dir --work-tree would). Processes
  // start on first use and are shut down when the run ends, however it ends.
  const filterSession = new FilterSession(
    readFilterDrivers(repo.config),
    job.worktree,
    job.materialize
      ? { ...process.env, GIT_DIR: repo.gitDir, GIT_WORK_TREE: job.worktree }
      : process.env,
  );
  try {
    // Open: the current index, the target, HEAD's lock.
    const current = readIndex(job.indexPath);
    const mode = chooseMode(job, current);
    const store = resources.store(repo.objectDirs);
    const { odb } = store;
    addon.decodeStats(store.opened()); // a warm engine's readers start this checkout's record
    const wt = (worktree = new WorktreeDir(addon, job.worktree));
    // Read before planning: what changed since the previous call (a warm engine only).
    const watch = resources.watch(job.worktree, filesystem);
    const knownClean =
      watch?.knownClean(current?.entries ?? null, current ? indexIdentity(job.indexPath) : null) ??
      null;
    const refs = new Refs(repo);
    const target: Resolved | null =
      mode === 'restore'
        ? null
        : resolveRevision(refs, odb, settings.ref, { allowTree: job.materialize });
    const moveHead = !job.materialize && mode !== 'paths' && target !== null && !target.keepHead;
    const headBefore = refs.read('HEAD');
    const oldOid = refs.resolve('HEAD');
    if (moveHead) headUpdate = new HeadUpdate(refs, target);
    killPoint();

    // Plan: target entries, the merge against index and worktree, blobs located.
    const protect = pathProtection(repo.config);
    if (current) assertSafePaths(current.entries, protect, 'the index');
    const pathspec = settings.paths ? new Pathspec(settings.paths) : null;
    // Directories the index's cache-tree says are unchanged are copied from it, not read.
    const lent =
      current && target && (mode === 'switch' || mode === 'force')
        ? lendIndex(odb, current, protect)
        : null;
    // A switch walks HEAD's tree next: kept, the target's walk lends it the subtrees they share.
    const targetWalk: TreeWalk | null = target
      ? walk(odb, target.tree, protect, { keep: mode === 'switch' })
      : null;
    let targetEntries = targetWalk?.entries ?? null;
    if (job.materialize && pathspec && targetEntries) {
      targetEntries = targetEntries.filter((name) => pathspec.matches(name));
      pathspec.assertAllMatched();
    }
    // git's warnings (attribute files, encodings), reported in the summary.
    const warnings: string[] = [];
    const warn = (message: string): void => void warnings.push(message);
    // What git converts before hashing a file it must compare with the index (clean filters
    // first, through this run's filter session).
    const checkin = current
      ? checkinConversions(
          repo,
          odb,
          current.entries,
          job.worktree,
          warn,
          addon.blobHasCrlf,
          (driver, path, content) => filterSession.clean(driver, path, content),
        )
      : undefined;
    const cone = job.materialize ? null : readCone(repo, warn);
    const plan = await makePlan(odb, {
      mode,
      root: job.worktree,
      target: targetEntries,
      index: current,
      head:
        mode === 'switch' && current !== null
          ? headTree(refs, odb, protect, { tree: lent?.root ?? null, entries: current.entries })
          : null,
      fileMode: repo.config.getBool('core.filemode') ?? true,
      symlinks: repo.config.getBool('core.symlinks') ?? true,
      probeThreads: workers,
      threshold,
      isIgnored: job.materialize ? () => false : lazyExcludes(repo),
      pathspec: job.materialize ? null : pathspec,
      inCone: cone ? (path) => inCone(cone, path) : null,
      probe: async (req) => probe(addon, req, wt, checkin),
      knownClean,
      listDir: (dir) => {
        const list = wt.list(dir);
        return typeof list === 'string' ? null : list;
      },
    });
    // What each written file's bytes go through (attributes of the result, as git reads them).
    const conversions = planConversions({
      repo,
      odb,
      result: plan.result,
      files: plan.files.map((f) => f.index),
      worktree: mode === 'fresh' || job.materialize ? null : job.worktree,
      direction: mode === 'restore' || mode === 'paths' ? 'checkin' : 'checkout',
      warn,
    });
    // git's threshold counts the entries its parallel queue takes: filtered ones are not.
    const filtered = conversions ? countFiltered(conversions, plan) : 0;
    const usePool = workers > 1 && plan.files.length - filtered > threshold;
    // The trees' bases are of no use to the file writers.
    odb.releaseCache();
    const planned = performance.now();
    killPoint();
    if (settings.signal?.aborted) throw aborted(settings.signal);

    // Write: removals, directories, files (in process or on the pool), links. From here until
    // the index is committed, a stop leaves the worktree part-way: its error says how to finish.
    partWayContext = {
      mode: job.materialize ? 'materialize' : mode,
      ref: settings.ref,
      paths: settings.paths,
    };
    const outcome = await execute(odb, plan, {
      root: job.worktree,
      worktree: wt,
      dirThreads: workers,
      threads: usePool ? workers : 1,
      readers: (n) => store.readers(n),
      streamThreshold: STREAM_THRESHOLD,
      sync: writerSync(fsync),
      concurrentDirs: filesystem.network,
      symlinks: repo.config.getBool('core.symlinks') ?? true,
      conversions,
      filters:
        filtered === 0
          ? null
          : {
              session: filterSession,
              ref: target ? checkoutRef(refs, settings.ref, target) : null,
              treeish: target ? (target.commit ?? target.tree) : null,
              // git's checkout-index delays nothing; `git checkout [<rev>] -- <paths>` may.
              canDelay: mode !== 'restore' || settings.paths !== undefined,
              toWorktree: toWorktree(addon, conversions!, plan),
            },
      onProgress: settings.onProgress,
      signal: settings.signal,
    });
    await filterSession.close();
    if (settings.signal?.aborted) throw aborted(settings.signal);
    if (outcome.failures.length > 0) {
      const first = outcome.failures[0]!;
      const { result } = plan;
      const hint = descriptorHint(outcome.failures.map((f) => f.message).join('\n'), workers);
      throw new PcheckoutError(
        isErrorCode(first.code) ? first.code : 'ERR_WRITE_FAILED',
        `${outcome.failures.length} file(s) could not be written; first: ${result.display(first.index)}: ${first.message}${hint}`,
        {
          path: result.display(first.index),
          oid: result.oidHex(first.index),
          written: {
            stage: 'files',
            removed: plan.deletes.length,
            files: plan.files.length + plan.symlinks.length - outcome.failures.length,
            total: plan.files.length + plan.symlinks.length,
          },
        },
      );
    }
    // Every write and removal durable (per the mode) before the index says they happened.
    const durability = syncBarrier(addon, plan, {
      root: job.worktree,
      mode: fsync,
      fs: filesystem,
      threads: workers,
      symlinksAsFiles: !(repo.config.getBool('core.symlinks') ?? true),
    });
    const written = performance.now();
    const decoded = addon.decodeStats(store.opened());

    // Finish: the index (after the racy-git wait if it pays), then HEAD or the metadata.
    const stats = mergedStats(plan, outcome.stats);
    // A restore keeps the entries as they are: the old file gets new stat data in place.
    const index =
      mode === 'restore' && current && plan.result.count === current.entries.count
        ? patchIndex(current.raw, current.offsets, current.stats, stats)
        : [
            buildIndex(plan.result, stats, {
              extFlags: plan.extFlags,
              version: indexVersion(repo, current),
              extensions: cacheTree(mode, targetWalk, targetEntries, plan),
            }),
          ];
    const racy = decideRacyWait(settings.racyWait, outcome.stats, Date.now(), [
      ...plan.files.map((f) => f.index),
      ...plan.symlinks,
      ...plan.gitlinks,
    ]);
    const waited = racy.waited ? await leaveRacySecond(outcome.stats) : 0;
    indexLock.writeAll(index);
    if (racy.waited && indexLock.mtimeSeconds() <= newestMtime(outcome.stats)) {
      // The filesystem's clock is coarser than ours; stamp the index with the time it is now.
      indexLock.touch();
    }
    killPoint();
    // The index first, then HEAD, as git: if HEAD cannot follow, the index and worktree hold
    // the target and HEAD the old commit — a state git reads as staged changes, not damage.
    indexLock.commit(fsync !== 'none');
    partWayContext = null;
    // What the next call may take as known: none of it where collisions rewrote files.
    watch?.record(
      indexIdentity(job.indexPath),
      plan.result,
      outcome.collisions.length === 0 ? plan.verified : null,
      mode === 'restore' && plan.result.count === current!.entries.count,
    );
    killPoint();
    const from = headBefore?.symref?.replace(/^refs\/heads\//, '') ?? oldOid ?? ZERO_OID;
    headUpdate?.commit(oldOid, from, fsync !== 'none');
    killPoint();
    if (job.materialize) writeMetadata(job, target!);
    else if (mode === 'switch' || mode === 'force') removeBranchState(repo);
    const headAfter = job.materialize ? undefined : refs.read('HEAD');
    const indexed = performance.now();
    // As git, once the checkout is complete: old and new HEAD and 1 for a checkout of a
    // revision, HEAD twice and 0 for paths; none for checkout-index (a restore) or materialize.
    const headNow = refs.resolve('HEAD') ?? ZERO_OID;
    const hookArgs =
      !settings.hooks || job.materialize
        ? null
        : settings.paths
          ? [headNow, headNow, '0']
          : mode === 'restore'
            ? null
            : [oldOid ?? ZERO_OID, headNow, '1'];
    const hook = hookArgs ? await runHook(repo, job.start, 'post-checkout', hookArgs) : null;
    return {
      mode: job.materialize ? 'materialize' : mode,
      commit: target?.commit ?? null,
      tree: target?.tree ?? null,
      ref: headAfter?.symref ?? null,
      detached: !job.materialize && headAfter?.symref === undefined,
      entries: plan.result.count,
      created: plan.counts.created,
      updated: plan.counts.updated,
      deleted: plan.counts.deleted,
      files: plan.files.length,
      symlinks: plan.symlinks.length,
      gitlinks: plan.gitlinks.length,
      bytes: outcome.bytes,
      pool: { used: usePool, workers: outcome.poolWorkers, files: outcome.poolFiles },
      filters: {
        files: outcome.filteredFiles,
        delayed: outcome.delayedFiles,
        failed: filterSession.failures.map(displayFailure),
      },
      workers,
      threshold,
      inflater: addon.inflater,
      openat2: addon.openat2,
      collisions: outcome.collisions,
      racy,
      newBranch: headUpdate?.newBranch ?? null,
      hook,
      fsync: durability,
      filesystem,
      warnings: [...warnings, ...outcome.warnings.map((w) => w.message)],
      decoded,
      watch: { active: watch !== null, known: countKnown(knownClean) },
      timings: {
        plan: round(planned - started),
        write: round(written - planned),
        index: round(indexed - written),
        total: round(indexed - started),
        racyWait: round(waited),
      },
    };
  } catch (err) {
    const explained = explainMissing(err, repo);
    throw partWayContext
      ? partWay(explained, err instanceof PcheckoutError ? err.written : undefined, partWayContext)
      : explained;
  } finally {
    await filterSession.close();
    resources.idle();
    headUpdate?.rollback();
    indexLock.rollback();
    worktree?.close();
  }
}

/** A checkout of a repository's own worktree and index. */
export function checkoutJob(repoPath: string, options: CheckoutOptions): Job {
  const settings = validate(repoPath, options);
  const repo = openRepo(repoPath);
  return {
    settings,
    repo,
    worktree: repo.worktree,
    indexPath: join(repo.gitDir, 'index'),
    materialize: false,
    start: repoPath,
  };
}

/** A materialize into a directory outside the repository that is empty or already ours. */
export function materializeJob(
  repoPath: string,
  targetDir: string,
  options: MaterializeOptions,
): Job {
  const settings = validateMaterialize(repoPath, targetDir, options);
  const repo = openRepo(repoPath);
  const { worktree, meta } = claimTarget(targetDir, repo, settings.force === true);
  return {
    settings,
    repo,
    worktree,
    indexPath: join(meta, 'index'),
    materialize: true,
    start: repoPath,
  };
}

/** Runs one job with pool and readers of its own, closed when it ends. */
async function oneShot(job: () => Job): Promise<CheckoutSummary> {
  const resources = new Resources();
  try {
    return await run(job(), resources);
  } finally {
    await resources.close();
  }
}

/**
 * Checks out a revision into a repository's worktree and writes its index — a fresh checkout,
 * a switch, a forced checkout, a restore from the index, or pathspecs: the API behind
 * `pcheckout`. (A build system checking out many trees: createEngine keeps threads warm.)
 */
export async function checkout(
  repoPath: string,
  options: CheckoutOptions = {},
): Promise<CheckoutSummary> {
  return oneShot(() => checkoutJob(repoPath, options));
}

/**
 * Writes a revision's tree (a commit, a tree, part of it with `paths`) into any directory
 * outside the repository, without touching the repository; a later call into the same
 * directory writes only the difference. What is there is recorded in `<targetDir>/.git/index`.
 */
export async function materialize(
  repoPath: string,
  targetDir: string,
  options: MaterializeOptions = {},
): Promise<CheckoutSummary> {
  return oneShot(() => materializeJob(repoPath, targetDir, options));
}

/** A note next to a materialized index: where it came from (for people; nothing reads it back). */
function writeMetadata(job: Job, target: Resolved): void {
  const file = join(job.worktree, MATERIALIZE_META, 'pcheckout.json');
  const note = {
    repository: job.repo.worktree || job.repo.gitDir,
    commit: target.commit,
    tree: target.tree,
    paths: job.settings.paths ?? null,
  };
  try {
    writeFileSync(file, `${JSON.stringify(note, null, 2)}\n`);
  } catch (err) {
    throw fromSystem(err, 'write', file);
  }
}

/** The files a plan writes through a filter driver. */
function countFiltered(conversions: Conversions, plan: Plan): number {
  if (!conversions.profiles.some((c) => c.filtered)) return 0;
  let n = 0;
  for (const f of plan.files) if (conversions.profiles[conversions.ids[f.index]!]!.filtered) n++;
  return n;
}

/** What git does to a filtered file's blob before its smudge filter: ident, eol, encoding. */
function toWorktree(
  addon: Addon,
  conversions: Conversions,
  plan: Plan,
): FilterStepSettings['toWorktree'] {
  const { result } = plan;
  return (k, blob) => {
    const native = nativeCheckout(conversions.profiles[conversions.ids[k]!]!);
    if (native === null) return { data: null };
    return addon.convertToWorktree(blob, native, Buffer.from(result.oid(k)), result.display(k));
  };
}

function displayFailure(f: FilterFailure): FilterFailure {
  return { ...f, path: Buffer.from(f.path, 'latin1').toString('utf8') };
}

/** git's exclude rules, loaded only if a decision needs them. */
function lazyExcludes(repo: Repo): (path: string, isDir: boolean) => boolean {
  let excludes: Excludes | undefined;
  return (path, isDir) => (excludes ??= new Excludes(repo)).isIgnored(path, isDir);
}

function countKnown(known: Uint8Array | null): number {
  let n = 0;
  if (known) for (let i = 0; i < known.length; i++) n += known[i]!;
  return n;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
