import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { oidBuffer } from '../repo/objects.js';
import { EntryList } from './entries.js';

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_SYMLINK = 0o120000;
export const MODE_GITLINK = 0o160000;

/** A regular file to write, located in the object store. */
export interface FileTask {
  index: number;
  pack: number;
  offset: number;
  size: number;
}

export interface Plan {
  entries: EntryList;
  /** Directories to create, parents first (latin1 names, see EntryList.name). */
  dirs: string[];
  /** Regular files in pack order (pack, then offset), loose objects last. */
  files: FileTask[];
  symlinks: number[];
  gitlinks: number[];
  /** Sum of the inflated sizes of the regular files. */
  fileBytes: number;
}

const TYPE_BLOB = 3;

export function walkTree(odb: NativeOdb, tree: string): EntryList {
  let raw;
  try {
    raw = odb.walkTree(oidBuffer(tree));
  } catch (err) {
    throw fromNative(err, `cannot read tree ${tree}`);
  }
  const entries = new EntryList(raw);
  for (let i = 1; i < entries.count; i++) {
    // Trees are sorted, so their walk is already in index order; a tree that breaks the rule
    // would break the index too, so refuse it rather than guess.
    if (Buffer.compare(entries.pathBytes(i - 1), entries.pathBytes(i)) >= 0) {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `tree ${tree} lists ${entries.display(i - 1)} and ${entries.display(i)} out of order`,
        { oid: tree },
      );
    }
  }
  return entries;
}

export function makePlan(odb: NativeOdb, entries: EntryList): Plan {
  const dirs: string[] = [];
  const seen = new Set<string>();
  const fileIdx: number[] = [];
  const symlinks: number[] = [];
  const gitlinks: number[] = [];
  const { paths, starts } = entries;
  let lastStart = 0;
  let lastLen = 0;
  for (let i = 0; i < entries.count; i++) {
    // Compare parent directories as bytes: a string is made only for a new directory.
    const start = starts[i]!;
    const slash = paths.lastIndexOf(0x2f, starts[i + 1]! - 2);
    const len = slash >= start ? slash - start : 0;
    if (
      len !== lastLen ||
      paths.compare(paths, lastStart, lastStart + lastLen, start, start + len) !== 0
    ) {
      addDirs(paths.toString('latin1', start, start + len), seen, dirs);
      lastStart = start;
      lastLen = len;
    }
    const mode = entries.modes[i]!;
    if (mode === MODE_SYMLINK) symlinks.push(i);
    else if (mode === MODE_GITLINK) gitlinks.push(i);
    else fileIdx.push(i);
  }
  const files = locateFiles(odb, entries, fileIdx);
  let fileBytes = 0;
  for (const f of files) fileBytes += f.size;
  return { entries, dirs, files, symlinks, gitlinks, fileBytes };
}

function addDirs(dir: string, seen: Set<string>, out: string[]): void {
  if (dir === '' || seen.has(dir)) return;
  const slash = dir.lastIndexOf('/');
  if (slash > 0) addDirs(dir.slice(0, slash), seen, out);
  seen.add(dir);
  out.push(dir);
}

/** Looks every blob up once, so a missing object fails the checkout before any write. */
function locateFiles(odb: NativeOdb, entries: EntryList, fileIdx: number[]): FileTask[] {
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
