/**
 * Piscina worker: loads the addon once per thread and keeps one object reader, so packs stay
 * mapped and the delta-base cache stays warm across the chunks it is handed. The task shape is
 * owned here; the constants every task would repeat come once, as the pool's workerData.
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
  objectDirs: string[];
  cacheBytes: number;
}

export interface WorkerTask {
  request: NativeWriteRequest;
}

/**
 * A chunk's result, or why the whole chunk failed. The failure comes back as data: an Error
 * crossing the thread boundary loses its `code` (structured clone keeps only name and message).
 */
export type WorkerResult = NativeWriteResult | { failure: { code: unknown; message: string } };

let odb: NativeOdb | undefined;

export default function run(task: WorkerTask): WorkerResult {
  try {
    const constants = workerData as WorkerConstants;
    odb ??= new (loadAddon().Odb)(constants.objectDirs, constants.cacheBytes);
    return odb.writeFiles(task.request);
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return { failure: { code: e?.code, message: String(e?.message ?? err) } };
  }
}
