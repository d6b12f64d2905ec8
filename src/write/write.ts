import {
  loadAddon,
  FILE_COLLIDED,
  FILE_FAILED,
  WRITE_REPLACE,
  type NativeOdb,
  type NativeWriteRequest,
  type NativeWriteResult,
} from '../addon.js';
import { callbackFailure, fromNative } from '../errors.js';
import { killPoint } from '../kill-point.js';
import { STAT_WORDS, newStats } from '../index/write.js';
import { checkoutIsNoop, type Conversions } from '../plan/conversion.js';
import type { EntryList } from '../plan/entries.js';
import type { FileTask } from '../plan/locate.js';
import { StoreTally } from './store.js';
import { makeChunks, spreadByDirectory, type Schedule } from './schedule.js';

export interface Progress {
  /** Regular files finished so far. */
  done: number;
  total: number;
  bytes: number;
}

export interface WriteSettings {
  root: string;
  /** Writing threads: more than one when the files are above the threshold (the pool). */
  threads: number;
  /** `n` object readers, one per thread (a reader's cache is not shared between threads). */
  readers: (n: number) => NativeOdb[];
  streamThreshold: number;
  /** The writer's per-file sync step (write/durability.ts). */
  sync: number;
  /** Per result entry, what its bytes go through (null: nothing for any). */
  conversions: Conversions | null;
  /**
   * Spread the parallel writers over directories, at most this many in one directory at a
   * time (a network filesystem: write/schedule.ts); 0 or absent: chunks of pack order.
   */
  perDir?: number;
  /** The store's layout directory (write/store.ts), or null; `link`: its link mode. */
  store: { root: string; link: boolean } | null;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  /**
   * Whether the call was aborted, read synchronously (the caller's shared flag): the signal of
   * an orchestrator thread fires only once its event loop runs, not while the requests are built.
   */
  aborted?: () => boolean;
  /**
   * The array the writers' stat data goes into, STAT_WORDS per entry, taken over as the
   * outcome's (it may hold other entries' already: the kept ones'); absent: a zeroed one.
   */
  stats?: Uint32Array | undefined;
}

export interface WriteOutcome {
  /**
   * STAT_WORDS per result entry: the written files' fresh stat data, in the array the settings
   * gave (else zero for entries not written here).
   */
  stats: Uint32Array;
  bytes: number;
  poolWorkers: number;
  /** Entries whose path was taken (EEXIST, a non-directory leading component, …). */
  collided: number[];
  failures: { index: number; code: string; message: string }[];
  /** Files written anyway, with git's complaint (e.g. "failed to encode"), by result entry. */
  warnings: { index: number; message: string }[];
  /** The store's counts (null: no store). */
  store: StoreTally | null;
}

function requestFor(
  entries: EntryList,
  replace: Uint8Array,
  chunk: FileTask[],
  settings: WriteSettings,
): NativeWriteRequest {
  let bytes = 0;
  for (const f of chunk) bytes += entries.starts[f.index + 1]! - entries.starts[f.index]!;
  const paths = Buffer.allocUnsafe(bytes);
  const oids = Buffer.allocUnsafe(chunk.length * 20);
  const modes = new Uint32Array(chunk.length);
  const sizes = new Float64Array(chunk.length);
  const flags = new Uint8Array(chunk.length);
  // The chunk's own table of conversions: only those its files use, numbered from 1.
  const conv = settings.conversions;
  let convert: Uint8Array | undefined;
  const used: number[] = [];
  if (conv) {
    const local = new Map<number, number>();
    chunk.forEach((f, k) => {
      const p = conv.ids[f.index]!;
      if (p === 0 || checkoutIsNoop(conv.profiles[p]!)) return;
      let l = local.get(p);
      if (l === undefined) {
        used.push(p);
        l = used.length;
        local.set(p, l);
      }
      convert ??= new Uint8Array(chunk.length);
      convert[k] = l;
    });
    if (used.length > 255) throw new RangeError('more than 255 conversions in one chunk');
  }
  let pos = 0;
  chunk.forEach((f, k) => {
    pos += entries.paths.copy(paths, pos, entries.starts[f.index]!, entries.starts[f.index + 1]!);
    entries.oids.copy(oids, k * 20, f.index * 20, f.index * 20 + 20);
    modes[k] = entries.modes[f.index]!;
    sizes[k] = f.size;
    flags[k] = replace[f.index] === 1 ? WRITE_REPLACE : 0;
  });
  return {
    root: settings.root,
    paths,
    oids,
    modes,
    sizes,
    flags,
    streamThreshold: settings.streamThreshold,
    sync: settings.sync,
    ...(settings.store !== null
      ? { store: settings.store.root, ...(settings.store.link ? { storeLink: true } : {}) }
      : {}),
    ...(convert
      ? {
          convert,
          conversions: used.map((p) => {
            const { crlf, ident, identInCore, encoding } = conv!.profiles[p]!;
            return { crlf, ident, identInCore, encoding };
          }),
        }
      : {}),
  };
}

function scheduleFor(entries: EntryList, files: FileTask[], settings: WriteSettings): Schedule {
  const { threads, perDir } = settings;
  if (threads > 1 && perDir !== undefined && perDir > 0)
    return spreadByDirectory(entries, files, { threads, perDir });
  const parts = threads > 1 ? threads * 8 : Math.min(16, Math.ceil(files.length / 256));
  return { chunks: makeChunks(files, parts), groups: null, perDir: 1 };
}

/** What to do when out of descriptors: each writing thread holds a file and its reader's packs. */
export function descriptorHint(message: string, threads: number): string {
  return /Too many open files/.test(message)
    ? ` (EMFILE: raise the limit with ulimit -n, or use fewer workers than ${threads})`
    : '';
}

/** One chunk's per-file results into the outcome: stat data, collisions, failures, warnings. */
function absorbChunk(outcome: WriteOutcome, chunk: FileTask[], res: NativeWriteResult): void {
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
  for (const w of res.warnings)
    outcome.warnings.push({ index: chunk[w.index]!.index, message: w.message });
  outcome.bytes += res.bytes;
  if (res.store) outcome.store?.add(res.store);
}

/**
 * Writes regular files: chunks handed to one native thread per reader, each taking the next
 * chunk when it is free (one reader: one thread, in order). Every chunk's result is absorbed
 * on this thread as it arrives, where progress is reported; an abort or a throwing callback
 * stops the threads before their next file.
 */
export async function writeFiles(
  entries: EntryList,
  files: FileTask[],
  replace: Uint8Array,
  settings: WriteSettings,
): Promise<WriteOutcome> {
  const outcome: WriteOutcome = {
    stats: settings.stats ?? newStats(entries.count),
    bytes: 0,
    poolWorkers: 0,
    collided: [],
    failures: [],
    warnings: [],
    store: settings.store !== null ? new StoreTally() : null,
  };
  const aborted = (): boolean => settings.signal?.aborted === true || settings.aborted?.() === true;
  if (files.length === 0 || aborted()) return outcome;
  const schedule = scheduleFor(entries, files, settings);
  const { chunks } = schedule;
  const parallel = settings.threads > 1;
  // Never more threads than chunks: the others would have nothing to take.
  const readers = settings.readers(Math.min(settings.threads, chunks.length));
  outcome.poolWorkers = parallel ? readers.length : 0;
  // Built here, ~1 ms per 1,000 files (80 ms for the Linux tree): an abort stops it between
  // chunks, and the writers never start.
  const requests: NativeWriteRequest[] = [];
  for (const chunk of chunks) {
    if (aborted()) return outcome;
    requests.push(requestFor(entries, replace, chunk, settings));
  }
  let done = 0;
  let stopped: unknown;
  const absorb = (chunk: FileTask[], res: NativeWriteResult): void => {
    absorbChunk(outcome, chunk, res);
    done += chunk.length;
    killPoint();
    try {
      settings.onProgress?.({ done, total: files.length, bytes: outcome.bytes });
    } catch (err) {
      throw callbackFailure(err);
    }
  };
  // Shared with the threads: a nonzero value stops them before their next file.
  const cancel = new Int32Array(new SharedArrayBuffer(4));
  const stop = (reason: unknown): void => {
    stopped ??= reason;
    Atomics.store(cancel, 0, 1);
  };
  const onAbort = (): void => void Atomics.store(cancel, 0, 1);
  settings.signal?.addEventListener('abort', onAbort);
  try {
    await loadAddon().writeParallel(
      readers,
      requests,
      cancel,
      (k, res) => {
        if (stopped !== undefined) return;
        try {
          if ('failure' in res) {
            const { failure } = res;
            const hint = descriptorHint(failure.message, readers.length);
            throw fromNative(
              { ...failure, message: failure.message + hint },
              'writing files failed',
            );
          }
          // A chunk stopped part-way has files not written: the run is being given up.
          if (res.cancelled) return;
          absorb(chunks[k]!, res);
        } catch (err) {
          stop(err);
        }
      },
      schedule.groups ?? undefined,
      schedule.perDir,
    );
  } catch (err) {
    throw fromNative(err, 'writing files failed');
  } finally {
    settings.signal?.removeEventListener('abort', onAbort);
  }
  if (stopped !== undefined) throw stopped;
  return outcome;
}
