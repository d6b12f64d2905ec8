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

/**
 * Looks every blob up once (regular files' and symlinks'), so a missing object fails the
 * checkout before any write.
 */
export function locateFiles(odb: NativeOdb, entries: EntryList, fileIdx: number[]): FileTask[] {
  const ids = Buffer.allocUnsafe(fileIdx.length * 20);
  fileIdx.forEach((idx, k) => entries.oids.copy(ids, k * 20, idx * 20, idx * 20 + 20));
  let info: Float64Array;
  try {
    info = odb.info(ids);
  } catch (err) {
    throw fromNative(err, 'cannot locate the blobs to check out');
  }
  const files: FileTask[] = fileIdx.map((index, k) => {
    const pack = info[4 * k]!;
    if (pack === -2) {
      throw new PcheckoutError(
        'ERR_MISSING_OBJECT',
        `blob ${entries.oidHex(index)} for ${entries.display(index)} is missing from the repository`,
        { oid: entries.oidHex(index), path: entries.display(index) },
      );
    }
    const type = info[4 * k + 3]!;
    if (type !== TYPE_BLOB && type !== 6 && type !== 7) {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `${entries.display(index)} points at ${entries.oidHex(index)}, which is not a blob`,
        { oid: entries.oidHex(index), path: entries.display(index) },
      );
    }
    return {
      index,
      pack: pack < 0 ? Number.MAX_SAFE_INTEGER : pack,
      offset: info[4 * k + 1]!,
      size: info[4 * k + 2]!,
    };
  });
  // Pack order keeps delta families together (bases before their deltas), so a worker's
  // base cache sees its bases again while they are still warm, and reads stay sequential.
  files.sort((a, b) => a.pack - b.pack || a.offset - b.offset);
  return files;
}
