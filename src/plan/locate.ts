import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import type { EntryList } from './entries.js';

/** A regular file to write, located in the object store. */
export interface FileTask {
  /** The entry's position in the list it was located from. */
  index: number;
  pack: number;
  offset: number;
  size: number;
}

const TYPE_BLOB = 3;
/** The tasks made between two looks at the abort flag, less one (a power of two). */
const CHECK_MASK = 4095;

/** The located blobs, and the entries whose blobs the repository lacks. */
export interface Located {
  /** In pack order; the missing ones left out. */
  files: FileTask[];
  /** Entry positions (in the list's order) whose blobs are missing. */
  missing: number[];
}

/**
 * Looks every blob up once (regular files' and symlinks'), so a missing object is known before
 * any write: a partial clone fetches them (run/fetch.ts), any other repository fails with
 * missingBlobError. An object that is there but no blob fails here.
 */
export function locateFiles(
  odb: NativeOdb,
  entries: EntryList,
  fileIdx: number[],
  check?: () => void,
): Located {
  const n = fileIdx.length;
  const ids = Buffer.allocUnsafe(n * 20);
  // Runs of consecutive entries are copied at once (a fresh checkout's files are a few runs).
  for (let k = 0; k < n;) {
    let end = k + 1;
    while (end < n && fileIdx[end] === fileIdx[k]! + (end - k)) end++;
    entries.oids.copy(ids, k * 20, fileIdx[k]! * 20, (fileIdx[k]! + (end - k)) * 20);
    k = end;
  }
  // Pack order (by pack and offset, loose ones last) keeps delta families together (bases
  // before their deltas), so a worker's base cache sees its bases again while they are still
  // warm, and reads stay sequential: the order the lookup itself went in, so no sort here.
  const order = new Int32Array(n);
  let info: Float64Array;
  try {
    info = odb.info(ids, order);
  } catch (err) {
    throw fromNative(err, 'cannot locate the blobs to check out');
  }
  const files: FileTask[] = [];
  const missing: number[] = [];
  let firstBad = n; // the first entry (in the list's order) that is not a blob
  for (let j = 0; j < n; j++) {
    // An abort lands here too: the Linux tree's 78,000 tasks take tens of ms.
    if (check && (j & CHECK_MASK) === CHECK_MASK) check();
    const k = order[j]!;
    const pack = info[4 * k]!;
    const type = info[4 * k + 3]!;
    if (pack === -2) {
      missing.push(k);
      continue;
    }
    if (type !== TYPE_BLOB && type !== 6 && type !== 7) {
      firstBad = Math.min(firstBad, k);
      continue;
    }
    files.push({
      index: fileIdx[k]!,
      pack: pack < 0 ? Number.MAX_SAFE_INTEGER : pack,
      offset: info[4 * k + 1]!,
      size: info[4 * k + 2]!,
    });
  }
  if (firstBad < n) {
    const index = fileIdx[firstBad]!;
    const where = { oid: entries.oidHex(index), path: entries.display(index) };
    throw new PcheckoutError(
      'ERR_CORRUPT_OBJECT',
      `${where.path} points at ${where.oid}, which is not a blob`,
      where,
    );
  }
  missing.sort((a, b) => a - b);
  return { files, missing: missing.map((k) => fileIdx[k]!) };
}

/** The error of a blob the repository lacks (the entry at `index` of the list). */
export function missingBlobError(entries: EntryList, index: number): PcheckoutError {
  const where = { oid: entries.oidHex(index), path: entries.display(index) };
  return new PcheckoutError(
    'ERR_MISSING_OBJECT',
    `blob ${where.oid} for ${where.path} is missing from the repository`,
    where,
  );
}
