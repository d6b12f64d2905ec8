import { availableParallelism } from 'node:os';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  type BigIntStats,
} from 'node:fs';
import { join } from 'node:path';
import { assertNoConversions } from './plan/attributes.js';
import { FILE_COLLIDED, FILE_FAILED, loadAddon, type NativeOdb } from './addon.js';
import { PcheckoutError, fromNative, fromSystem, isErrorCode } from './errors.js';
import { STAT_WORDS, buildIndex } from './index/write.js';
import { LockFile } from './lock.js';
import { ZERO_OID, readObject } from './repo/objects.js';
import {
  optionalBoolean,
  optionalFunction,
  optionalInteger,
  optionalSignal,
  optionalString,
} from './options.js';
import { makePlan, walkTree, type Plan } from './plan/plan.js';
import type { EntryList } from './plan/entries.js';
import { Refs, resolveRevision } from './repo/refs.js';
import { openRepo, type Repo } from './repo/repo.js';
import { writeFiles, type Progress, type WriteOutcome } from './write/write.js';

export type { Progress } from './write/write.js';

export interface CheckoutOptions {
  /** A branch, tag, object id (full or abbreviated), or `rev~n` / `rev^{tree}`; default: HEAD. */
  ref?: string;
  /** Worker threads for the pool; 0 = one per core. Default: `checkout.workers`, else one per core. */
  workers?: number;
  /** Use the pool only above this many files. Default: `checkout.thresholdForParallelism`, else 100. */
  threshold?: number;
  /** Called as files finish (per chunk). */
  onProgress?: (progress: Progress) => void;
  /** Stops handing out work; files written so far stay, no index is written. */
  signal?: AbortSignal;
  /**
   * git trusts an entry's stat data only if the index is from a later second than the file
   * ("racy git"); otherwise it re-reads and hashes the file on its next look. By default the
   * index is written once the clock has left the second of the newest file (at most ~1 s of
   * waiting). `false` skips the wait: git then re-hashes those files once, on its next status.
   */
  racyWait?: boolean;
}

export interface CheckoutSummary {
  /** The commit checked out, or null when a tree was given. */
  commit: string | null;
  tree: string;
  /** HEAD's branch afterwards (e.g. refs/heads/main), or null when HEAD is detached. */
  ref: string | null;
  detached: boolean;
  /** Entries in the index written. */
  entries: number;
  /** Regular files written. */
  files: number;
  symlinks: number;
  gitlinks: number;
  /** Bytes of regular-file content written. */
  bytes: number;
  pool: { used: boolean; workers: number };
  /** The worker count in force (option, config or cores) and the threshold in force. */
  workers: number;
  threshold: number;
  inflater: 'libdeflate' | 'zlib';
  /** Paths that collided with another entry (e.g. case-insensitive filesystems), sorted. */
  collisions: string[];
  /** Milliseconds per phase. */
  timings: { plan: number; write: number; index: number; total: number; racyWait: number };
}

const DEFAULT_THRESHOLD = 100;
const CACHE_BYTES = 32 * 1024 * 1024; // delta-base cache per reader (main thread, each worker)
const STREAM_THRESHOLD = 100 * 1024 * 1024; // larger blobs are streamed to disk, not held whole

interface Settings {
  ref: string | undefined;
  workers: number | undefined;
  threshold: number | undefined;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  racyWait: boolean;
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
  return {
    ref: optionalString('ref', o['ref']),
    workers: optionalInteger('workers', o['workers'], 0, 1024),
    threshold: optionalInteger('threshold', o['threshold'], 0),
    onProgress: optionalFunction<(p: Progress) => void>('onProgress', o['onProgress']),
    signal: optionalSignal('signal', o['signal']),
    racyWait: optionalBoolean('racyWait', o['racyWait']) ?? true,
  };
}

function aborted(): PcheckoutError {
  return new PcheckoutError('ERR_ABORTED', 'the checkout was aborted');
}

/** Only `.git` may be there, and no index: this is a fresh checkout. */
function ensureFresh(repo: Repo): void {
  let names: string[];
  try {
    names = readdirSync(repo.worktree);
  } catch (err) {
    throw fromSystem(err, 'read', repo.worktree);
  }
  const others = names.filter((n) => n !== '.git');
  if (others.length > 0) {
    const shown =
      others.slice(0, 5).join(', ') + (others.length > 5 ? `, … (${others.length} in all)` : '');
    throw new PcheckoutError(
      'ERR_WORKTREE_NOT_EMPTY',
      `${repo.worktree} already has files (${shown}); pcheckout does fresh checkouts into a worktree that holds only .git`,
      { path: repo.worktree },
    );
  }
  try {
    lstatSync(join(repo.gitDir, 'index'));
  } catch {
    return;
  }
  throw new PcheckoutError(
    'ERR_WORKTREE_NOT_EMPTY',
    `${join(repo.gitDir, 'index')} exists; pcheckout does fresh checkouts (no index yet, as after git clone --no-checkout)`,
    { path: join(repo.gitDir, 'index') },
  );
}

function fullPath(worktree: string, entries: EntryList, i: number): Buffer {
  return Buffer.concat([Buffer.from(`${worktree}/`), entries.pathBytes(i)]);
}

function putStat(stats: Uint32Array, i: number, st: BigIntStats): void {
  const w = (v: bigint): number => Number(v & 0xffffffffn);
  const base = i * STAT_WORDS;
  stats[base] = w(st.ctimeNs / 1_000_000_000n);
  stats[base + 1] = w(st.ctimeNs % 1_000_000_000n);
  stats[base + 2] = w(st.mtimeNs / 1_000_000_000n);
  stats[base + 3] = w(st.mtimeNs % 1_000_000_000n);
  stats[base + 4] = w(st.dev);
  stats[base + 5] = w(st.ino);
  stats[base + 6] = w(st.mode);
  stats[base + 7] = w(st.uid);
  stats[base + 8] = w(st.gid);
  stats[base + 9] = w(st.size);
}

function createDirs(worktree: string, plan: Plan): void {
  const prefix = Buffer.from(`${worktree}/`);
  const make = (rel: Buffer): void => {
    const path = Buffer.concat([prefix, rel]);
    try {
      mkdirSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // EEXIST: a directory of another case on a case-insensitive filesystem; the writes that
      // follow detect and report the collision.
      if (code !== 'EEXIST') throw fromSystem(err, 'create directory', path.toString());
    }
  };
  for (const dir of plan.dirs) make(Buffer.from(dir, 'latin1'));
  for (const i of plan.gitlinks) make(plan.entries.pathBytes(i));
}

/** Symlinks go last and on this thread: a link made while workers write could redirect them. */
function writeSymlinks(
  repo: Repo,
  odb: NativeOdb,
  plan: Plan,
  outcome: WriteOutcome,
  useSymlinks: boolean,
): void {
  const { entries } = plan;
  for (const i of plan.symlinks) {
    const blob = readObject(odb, entries.oidHex(i));
    if (blob.type !== 'blob') {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `symlink ${entries.display(i)} points at a ${blob.type}`,
        {
          oid: entries.oidHex(i),
        },
      );
    }
    const path = fullPath(repo.worktree, entries, i);
    try {
      if (useSymlinks) symlinkSync(blob.data, path);
      else writeFileSync(path, blob.data, { flag: 'wx', mode: 0o666 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR') {
        outcome.collided.push(i);
        continue;
      }
      throw fromSystem(err, 'create symlink', entries.display(i));
    }
    putStat(outcome.stats, i, lstatSync(path, { bigint: true }));
  }
  for (const i of plan.gitlinks) {
    putStat(outcome.stats, i, lstatSync(fullPath(repo.worktree, entries, i), { bigint: true }));
  }
}

/**
 * Entries whose path was taken when written (two names that one filesystem treats as the same):
 * written again one by one, last one wins, as git does. Returns every path of each group.
 */
function retryCollisions(repo: Repo, odb: NativeOdb, plan: Plan, outcome: WriteOutcome): string[] {
  if (outcome.collided.length === 0) return [];
  const { entries } = plan;
  const retry = outcome.collided.filter(
    (i) => entries.modes[i] !== 0o120000 && entries.modes[i] !== 0o160000,
  );
  for (const i of retry) {
    const path = fullPath(repo.worktree, entries, i);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory()) unlinkSync(path);
    } catch {
      /* nothing there (a leading component was in the way) */
    }
    const task = plan.files.find((f) => f.index === i)!;
    const res = odb.writeFiles({
      root: repo.worktree,
      paths: Buffer.concat([entries.pathBytes(i), Buffer.alloc(1)]),
      oids: Buffer.from(entries.oid(i)),
      modes: Uint32Array.of(entries.modes[i]!),
      sizes: Float64Array.of(task.size),
      streamThreshold: STREAM_THRESHOLD,
    });
    if (res.status[0] === FILE_FAILED) {
      outcome.failures.push({
        index: i,
        code: res.errors[0]!.code,
        message: res.errors[0]!.message,
      });
    } else if (res.status[0] !== FILE_COLLIDED) {
      outcome.stats.set(res.stats, i * STAT_WORDS);
      outcome.bytes += res.bytes;
    }
  }
  // Report each group whole: the collided entries and the ones whose names fold to theirs.
  const folded = new Set(outcome.collided.map((i) => entries.display(i).toLowerCase()));
  const names: string[] = [];
  for (let i = 0; i < entries.count; i++) {
    if (folded.has(entries.display(i).toLowerCase())) names.push(entries.display(i));
  }
  for (const i of outcome.collided)
    if (!names.includes(entries.display(i))) names.push(entries.display(i));
  return names.sort();
}

function configuredWorkers(repo: Repo, explicit: number | undefined): number {
  const cores = availableParallelism();
  if (explicit !== undefined) return explicit < 1 ? cores : explicit;
  const fromConfig = repo.config.getInt('checkout.workers');
  if (fromConfig === undefined) return cores;
  return fromConfig < 1 ? cores : fromConfig;
}

/**
 * Checks out a commit into a repository's empty worktree and writes its index: the API behind
 * the `pcheckout` command.
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
  const indexLock = new LockFile(join(repo.gitDir, 'index'), 'ERR_INDEX_LOCKED');
  let headLock: LockFile | undefined;
  let odb: NativeOdb | undefined;
  try {
    ensureFresh(repo);
    try {
      odb = new addon.Odb(repo.objectDirs, CACHE_BYTES);
    } catch (err) {
      throw fromNative(err, 'cannot open the object database');
    }
    const refs = new Refs(repo);
    const target = resolveRevision(refs, odb, settings.ref);
    const headBefore = refs.read('HEAD');
    const oldOid = refs.resolve('HEAD');
    if (!target.keepHead) {
      headLock = refs.lockHead(
        target.branch !== null ? { branch: target.branch } : { oid: target.commit! },
      );
    }
    const entries = walkTree(odb, target.tree);
    assertNoConversions(repo, odb, entries);
    const plan = makePlan(odb, entries);
    const workers = configuredWorkers(repo, settings.workers);
    const threshold =
      settings.threshold ??
      repo.config.getInt('checkout.thresholdforparallelism') ??
      DEFAULT_THRESHOLD;
    const usePool = workers > 1 && plan.files.length > threshold;
    // The trees' bases are of no use to the file writers; with a pool this reader sits idle.
    if (usePool) odb.releaseCache();
    const planned = performance.now();
    if (settings.signal?.aborted) throw aborted();

    createDirs(repo.worktree, plan);
    const outcome = await writeFiles(plan, odb, {
      root: repo.worktree,
      objectDirs: repo.objectDirs,
      workers,
      usePool,
      cacheBytes: CACHE_BYTES,
      streamThreshold: STREAM_THRESHOLD,
      onProgress: settings.onProgress,
      signal: settings.signal,
    });
    if (settings.signal?.aborted) throw aborted();
    writeSymlinks(repo, odb, plan, outcome, repo.config.getBool('core.symlinks') ?? true);
    const collisions = retryCollisions(repo, odb, plan, outcome);
    if (outcome.failures.length > 0) {
      const first = outcome.failures[0]!;
      throw new PcheckoutError(
        isErrorCode(first.code) ? first.code : 'ERR_WRITE_FAILED',
        `${outcome.failures.length} file(s) could not be written; first: ${entries.display(first.index)}: ${first.message}`,
        { path: entries.display(first.index), oid: entries.oidHex(first.index) },
      );
    }
    const written = performance.now();

    const index = buildIndex(entries, outcome.stats);
    const waited = settings.racyWait ? await leaveRacySecond(outcome.stats) : 0;
    indexLock.write(index);
    if (settings.racyWait && indexLock.mtimeSeconds() <= newestMtime(outcome.stats)) {
      // The filesystem's clock is coarser than ours; stamp the index with the time it is now.
      indexLock.touch();
    }
    indexLock.commit();
    if (headLock) {
      headLock.commit();
      const from = headBefore?.symref?.replace(/^refs\/heads\//, '') ?? oldOid ?? ZERO_OID;
      refs.appendHeadLog(
        oldOid ?? ZERO_OID,
        target.commit!,
        `checkout: moving from ${from} to ${settings.ref}`,
      );
    }
    const headAfter = refs.read('HEAD');
    const indexed = performance.now();
    return {
      commit: target.commit,
      tree: target.tree,
      ref: headAfter?.symref ?? null,
      detached: headAfter?.symref === undefined,
      entries: entries.count,
      files: plan.files.length,
      symlinks: plan.symlinks.length,
      gitlinks: plan.gitlinks.length,
      bytes: outcome.bytes,
      pool: { used: usePool, workers: outcome.poolWorkers },
      workers,
      threshold,
      inflater: addon.inflater,
      collisions,
      timings: {
        plan: round(planned - started),
        write: round(written - planned),
        index: round(indexed - written),
        total: round(indexed - started),
        racyWait: round(waited),
      },
    };
  } finally {
    headLock?.rollback();
    indexLock.rollback();
    odb?.close();
  }
}

function newestMtime(stats: Uint32Array): number {
  let newest = 0;
  for (let i = 2; i < stats.length; i += STAT_WORDS) if (stats[i]! > newest) newest = stats[i]!;
  return newest;
}

const MAX_RACY_WAIT_MS = 2000; // a file stamped far in the future (clock skew) is not waited for

/** Sleeps until the wall clock is past the second of the newest mtime; returns the ms waited. */
async function leaveRacySecond(stats: Uint32Array): Promise<number> {
  const until = (newestMtime(stats) + 1) * 1000 + 5; // +5 ms: file times come from a coarse clock
  const wait = until - Date.now();
  if (wait <= 0 || wait > MAX_RACY_WAIT_MS) return 0;
  await new Promise((resolve) => setTimeout(resolve, wait));
  return wait;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
