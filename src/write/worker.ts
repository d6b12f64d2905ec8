/**
 * Piscina worker: loads the addon once per thread and keeps one object reader per repository,
 * so packs stay mapped and the delta-base cache stays warm across the chunks it is handed.
 */
import {
  loadAddon,
  type NativeOdb,
  type NativeWriteRequest,
  type NativeWriteResult,
} from '../addon.js';

export interface WorkerTask {
  objectDirs: string[];
  cacheBytes: number;
  request: NativeWriteRequest;
}

const addon = loadAddon();
const readers = new Map<string, NativeOdb>();

export default function writeChunk(task: WorkerTask): NativeWriteResult {
  const key = `${task.cacheBytes}\0${task.objectDirs.join('\0')}`;
  let odb = readers.get(key);
  if (!odb) {
    odb = new addon.Odb(task.objectDirs, task.cacheBytes);
    readers.set(key, odb);
  }
  return odb.writeFiles(task.request);
}
