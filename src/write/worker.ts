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

export type WorkerResult = NativeWriteResult;

const addon = loadAddon();
const constants = workerData as WorkerConstants;
let odb: NativeOdb | undefined;

export default function run(task: WorkerTask): WorkerResult {
  odb ??= new addon.Odb(constants.objectDirs, constants.cacheBytes);
  return odb.writeFiles(task.request);
}
