/**
 * Piscina worker: loads the addon once per thread and keeps an object reader per object store
 * it has been handed, so packs stay mapped and the delta-base cache stays warm across the
 * chunks of one checkout — and, in a warm engine, across checkouts. The task shape is owned
 * here; the constants every task would repeat come once, as the pool's workerData.
 */
import { workerData } from 'node:worker_threads';
import {
  loadAddon,
  type NativeOdb,
  type NativeWriteRequest,
  type NativeWriteResult,
} from '../addon.js';

/** Given once per pool. */
export interface WorkerConstants {
  /** The delta-base cache of each thread's reader. */
  cacheBytes: number;
}

/** A repository's object directories, under an id that changes when its packs change. */
export interface ObjectStore {
  id: number;
  objectDirs: string[];
}

export interface WorkerTask {
  store: ObjectStore;
  request: NativeWriteRequest;
}

/**
 * A chunk's result, or why the whole chunk failed. The failure comes back as data: an Error
 * crossing the thread boundary loses its `code` (structured clone keeps only name and message).
 */
export type WorkerResult = NativeWriteResult | { failure: { code: unknown; message: string } };

/** Readers kept per thread: a build system alternating between a few repositories. */
const MAX_STORES = 4;

const constants = workerData as WorkerConstants;
const readers = new Map<number, NativeOdb>(); // least recently used first

function readerFor(store: ObjectStore): NativeOdb {
  let odb = readers.get(store.id);
  if (odb) {
    readers.delete(store.id);
  } else {
    odb = new (loadAddon().Odb)(store.objectDirs, constants.cacheBytes);
    for (const [id, old] of readers) {
      if (readers.size < MAX_STORES) break;
      readers.delete(id);
      old.close();
    }
  }
  readers.set(store.id, odb);
  return odb;
}

export default function run(task: WorkerTask): WorkerResult {
  try {
    return readerFor(task.store).writeFiles(task.request);
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return { failure: { code: e?.code, message: String(e?.message ?? err) } };
  }
}
