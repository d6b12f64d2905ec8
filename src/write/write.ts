import { Piscina } from 'piscina';
import {
  FILE_COLLIDED,
  FILE_FAILED,
  type NativeOdb,
  type NativeWriteRequest,
  type NativeWriteResult,
} from '../addon.js';
import { PcheckoutError, fromNative, isErrorCode } from '../errors.js';
import { STAT_WORDS } from '../index/write.js';
import type { EntryList } from '../plan/entries.js';
import type { FileTask, Plan } from '../plan/plan.js';
import type { WorkerTask } from './worker.js';

export interface Progress {
  /** Regular files finished so far. */
  done: number;
  total: number;
  bytes: number;
}

export interface WriteSettings {
  root: string;
  objectDirs: string[];
  /** Worker threads when the pool is used. */
  workers: number;
  usePool: boolean;
  cacheBytes: number;
  streamThreshold: number;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
}

export interface WriteOutcome {
  /** STAT_WORDS per tree entry (zero for entries not written here). */
  stats: Uint32Array;
  bytes: number;
  poolWorkers: number;
  /** Entries whose path was taken (EEXIST, a non-directory leading component, …). */
  collided: number[];
  failures: { index: number; code: string; message: string }[];
}

// A file costs about as much as inflating and writing this many bytes (syscalls, inode).
const PER_FILE_WEIGHT = 32 * 1024;
const MAX_FILES_PER_CHUNK = 4096;

/** Splits files (already in pack order) into runs of roughly equal weight. */
export function makeChunks(files: FileTask[], parts: number): FileTask[][] {
  let total = 0;
  for (const f of files) total += f.size + PER_FILE_WEIGHT;
  const target = Math.max(total / Math.max(parts, 1), PER_FILE_WEIGHT);
  const chunks: FileTask[][] = [];
  let current: FileTask[] = [];
  let weight = 0;
  for (const f of files) {
    current.push(f);
    weight += f.size + PER_FILE_WEIGHT;
    if (weight >= target || current.length >= MAX_FILES_PER_CHUNK) {
      chunks.push(current);
      current = [];
      weight = 0;
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function requestFor(
  entries: EntryList,
  chunk: FileTask[],
  settings: WriteSettings,
): NativeWriteRequest {
  let bytes = 0;
  for (const f of chunk) bytes += entries.starts[f.index + 1]! - entries.starts[f.index]!;
  const paths = Buffer.allocUnsafe(bytes);
  const oids = Buffer.allocUnsafe(chunk.length * 20);
  const modes = new Uint32Array(chunk.length);
  const sizes = new Float64Array(chunk.length);
  let pos = 0;
  chunk.forEach((f, k) => {
    pos += entries.paths.copy(paths, pos, entries.starts[f.index]!, entries.starts[f.index + 1]!);
    entries.oids.copy(oids, k * 20, f.index * 20, f.index * 20 + 20);
    modes[k] = entries.modes[f.index]!;
    sizes[k] = f.size;
  });
  return {
    root: settings.root,
    paths,
    oids,
    modes,
    sizes,
    streamThreshold: settings.streamThreshold,
  };
}

/**
 * Writes every regular file of the plan: in process (one libuv thread, sequentially) or on a
 * Piscina pool. Either way the same native writer does the work; chunks are handed out one at
 * a time to whoever is free, heaviest-first order is not needed because chunks are even.
 */
export async function writeFiles(
  plan: Plan,
  mainOdb: NativeOdb,
  settings: WriteSettings,
): Promise<WriteOutcome> {
  const { entries, files } = plan;
  const outcome: WriteOutcome = {
    stats: new Uint32Array(entries.count * STAT_WORDS),
    bytes: 0,
    poolWorkers: 0,
    collided: [],
    failures: [],
  };
  if (files.length === 0) return outcome;
  const parts = settings.usePool
    ? settings.workers * 8
    : Math.min(16, Math.ceil(files.length / 256));
  const chunks = makeChunks(files, parts);
  let done = 0;
  const absorb = (chunk: FileTask[], res: NativeWriteResult): void => {
    chunk.forEach((f, k) => {
      const st = res.status[k];
      if (st === FILE_COLLIDED) outcome.collided.push(f.index);
      else if (st !== FILE_FAILED)
        outcome.stats.set(
          res.stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS),
          f.index * STAT_WORDS,
        );
    });
    for (const e of res.errors)
      outcome.failures.push({ index: chunk[e.index]!.index, code: e.code, message: e.message });
    outcome.bytes += res.bytes;
    done += chunk.length;
    settings.onProgress?.({ done, total: files.length, bytes: outcome.bytes });
  };

  if (!settings.usePool) {
    for (const chunk of chunks) {
      if (settings.signal?.aborted) break;
      let res: NativeWriteResult;
      try {
        res = await mainOdb.writeFilesAsync(requestFor(entries, chunk, settings));
      } catch (err) {
        throw fromNative(err, 'writing files failed');
      }
      absorb(chunk, res);
    }
    return outcome;
  }

  const threads = Math.min(settings.workers, chunks.length);
  outcome.poolWorkers = threads;
  const pool = new Piscina<WorkerTask, NativeWriteResult>({
    filename: new URL('./worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    concurrentTasksPerWorker: 1,
    idleTimeout: Infinity,
  });
  let next = 0;
  let firstError: unknown;
  const runOne = async (): Promise<void> => {
    while (next < chunks.length && firstError === undefined && !settings.signal?.aborted) {
      const chunk = chunks[next++]!;
      const task: WorkerTask = {
        objectDirs: settings.objectDirs,
        cacheBytes: settings.cacheBytes,
        request: requestFor(entries, chunk, settings),
      };
      try {
        absorb(chunk, await pool.run(task));
      } catch (err) {
        firstError ??= err;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: threads }, runOne));
  } finally {
    await pool.destroy();
  }
  if (firstError !== undefined) {
    // Coded errors come from the addon (the root vanished, …); anything else is the pool's.
    if (isErrorCode((firstError as { code?: unknown }).code))
      throw fromNative(firstError, 'a worker failed');
    throw new PcheckoutError(
      'ERR_WORKER',
      `a checkout worker failed: ${(firstError as Error)?.message ?? firstError}`,
      {
        cause: firstError,
      },
    );
  }
  return outcome;
}
