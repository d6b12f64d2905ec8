import { createHash } from 'node:crypto';
import { STAT_WORDS, loadAddon, type NativePathList } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import type { EntryList } from '../plan/entries.js';

export { STAT_WORDS };

/**
 * Zeroed stat data for `count` entries, filled where a phase writes: memory of huge pages from
 * the addon. The writers' stat data of a 1% switch of a million files, scattered over 40 MB of
 * fresh 4 KiB pages, cost ~0.2 s in page faults.
 */
export function newStats(count: number): Uint32Array {
  return loadAddon().newStats(count);
}

/** Whether entry k of `stats` holds stat data (none: an entry taken from a tree, not written). */
export function hasStatData(stats: Uint32Array, k: number): boolean {
  return stats[k * STAT_WORDS + 2] !== 0 || stats[k * STAT_WORDS + 5] !== 0;
}

/** The stat words compared: ctime and mtime (s, ns), inode, uid, gid, size (not mode, st_dev). */
const SAME_STAT_WORDS = [0, 1, 2, 3, 5, 7, 8, 9] as const;

/** Whether entry `j` of stat data `a` and entry `k` of `b` are the same (SAME_STAT_WORDS). */
export function sameStatData(a: Uint32Array, j: number, b: Uint32Array, k: number): boolean {
  const x = j * STAT_WORDS;
  const y = k * STAT_WORDS;
  for (const w of SAME_STAT_WORDS) if (a[x + w] !== b[y + w]) return false;
  return true;
}

const KNOWN_EXT_FLAGS = 0x6000; // SKIP_WORKTREE | INTENT_TO_ADD (see read.ts)

export interface BuildIndexOptions {
  /** Index format version; default 2. Raised to 3 when any entry has extended flags. */
  version?: 2 | 3 | 4 | undefined;
  /** The extended flags word per entry (SKIP_WORKTREE, INTENT_TO_ADD), 0 for none. */
  extFlags?: Uint16Array | undefined;
  /** Extensions to write after the entries, each whole (signature, size, data). */
  extensions?: Buffer[] | undefined;
}

/**
 * Serializes an index (git's gitformat-index): header, entries with their stat data (all at
 * stage 0), the extensions given, and the trailing SHA-1 of everything before it. Version 2 by default;
 * version 3 at least when an entry has extended flags (only those entries carry the extra word);
 * version 4 prefix-compresses the paths and drops the padding.
 */
export function buildIndex(
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions = {},
): Buffer {
  // One part holding every entry: the whole file, checksum included.
  const [whole] = indexParts(entries, stats, options, Math.max(1, entries.count));
  return whole!;
}

/** Entries per part of indexParts (a few MB each). */
export const INDEX_PART_ENTRIES = 1 << 16;

/**
 * The same file as buildIndex, as parts made one at a time while they are consumed, the
 * checksum in the last: the native serializer's parts ([from, to), as writeIndexFile makes
 * them), here for buildIndex (one part) and for the tests of the partition. A checkout writes
 * a new file through writeIndexFile, which never holds it whole. The entries and stats must
 * not change until the last part is taken.
 */
export function* indexParts(
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions = {},
  perPart = INDEX_PART_ENTRIES,
): Generator<Buffer, void, undefined> {
  const { version, extFlags } = checkedLayout(entries, options);
  // The loop over the entries is native: field by field in JS it was ~50 ms of a switch of the
  // Linux tree (a Buffer call per stat word, id and path).
  const { paths, starts, count, oids, modes } = entries;
  const list = { paths, starts, count, oids, modes };
  const hash = createHash('sha1');
  const addon = loadAddon();
  for (let from = 0; ; from += perPart) {
    const to = Math.min(count, from + perPart);
    const part = addon.serializeIndex(
      list,
      stats,
      extFlags,
      version,
      options.extensions ?? [],
      from,
      to,
    );
    if (to < count) {
      hash.update(part);
      yield part;
      continue;
    }
    const end = part.length - 20;
    hash.update(part.subarray(0, end)).digest().copy(part, end);
    yield part;
    return;
  }
}

/**
 * The same file as buildIndex written whole to descriptor `fd` as it is made, natively: a
 * part of entries at a time into one reused buffer, hashed and written, the checksum last.
 * Nothing of it is ever whole in memory, nor copied into a Buffer: at a million entries
 * (~120 MB) making it whole first, then writing it, cost a 1% switch ~0.9 s (page faults of
 * the fresh memory, a write from a source far larger than the caches). Returns 0, or the errno
 * of the write that failed.
 */
export function writeIndexFile(
  fd: number,
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions = {},
): number {
  return loadAddon().writeIndexFile(fd, ...nativeIndexArgs(entries, stats, options));
}

/**
 * Whether the file writeIndexFile would write is `file` (an index read, its checksum verified)
 * byte for byte, found without making it whole: a checkout that changed nothing leaves the
 * index as it is. When `file` is a mapping of mapFile's, its pages are dropped from the process
 * as they are compared.
 */
export function indexFileEquals(
  file: Buffer,
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions = {},
): boolean {
  return loadAddon().indexFileEquals(file, ...nativeIndexArgs(entries, stats, options));
}

/** The native serializer's arguments after its first: list, stats, extFlags, version, extensions. */
function nativeIndexArgs(
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions,
): [NativePathList, Uint32Array, Uint16Array | null, 2 | 3 | 4, Buffer[]] {
  const { version, extFlags } = checkedLayout(entries, options);
  const { paths, starts, count, oids, modes } = entries;
  return [
    { paths, starts, count, oids, modes },
    stats,
    extFlags,
    version,
    options.extensions ?? [],
  ];
}

/**
 * The version and extended flags an index is written with: version 2 by default, 3 at least
 * when an entry has extended flags (which must be known ones).
 */
function checkedLayout(
  entries: EntryList,
  options: BuildIndexOptions,
): { version: 2 | 3 | 4; extFlags: Uint16Array | null } {
  const count = entries.count;
  let version = options.version ?? 2;
  if (version !== 2 && version !== 3 && version !== 4) {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `index version must be 2, 3 or 4, not ${version}`,
    );
  }
  const extFlags = options.extFlags;
  let extended = false;
  if (extFlags !== undefined) {
    if (extFlags.length < count) {
      throw new PcheckoutError('ERR_INVALID_OPTION', 'extFlags needs one word per entry');
    }
    for (let i = 0; i < count; i++) {
      const f = extFlags[i]!;
      if (f === 0) continue;
      if (f & ~KNOWN_EXT_FLAGS) {
        throw new PcheckoutError(
          'ERR_INVALID_OPTION',
          `entry ${i} has unknown extended flags 0x${f.toString(16)}`,
        );
      }
      extended = true;
    }
  }
  if (extended && version === 2) version = 3;
  return { version, extFlags: extended ? extFlags! : null };
}

/** An index extension whole, as it is written after the entries: signature, size, data. */
export function extensionBytes(signature: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(signature, 0, 'latin1');
  head.writeUInt32BE(data.length, 4);
  return Buffer.concat([head, data]);
}

/** The bytes of a typed array, as a Buffer over the same memory. */
export function bytesOf(a: Uint16Array | Uint32Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * The old index with new stat data where it changed, everything else — entries, flags,
 * extensions — byte for byte: the index of a restore, whose entries are the old ones. Returned
 * as slices of the old file (unchanged runs, shared, not copied) and the patched stat words,
 * then the new checksum, for one gathered write: 80,000 entries are neither serialized again
 * nor copied, and the TREE and other extensions stay valid.
 */
export function patchIndex(
  raw: Buffer,
  offsets: Uint32Array,
  oldStats: Uint32Array,
  newStats: Uint32Array,
): Buffer[] {
  const parts: Buffer[] = [];
  const hash = createHash('sha1');
  const push = (b: Buffer): void => {
    if (b.length === 0) return;
    parts.push(b);
    hash.update(b);
  };
  const end = raw.length - 20;
  let from = 0;
  // Blocks of entries whose stat words are all the same are skipped with one compare: a
  // restore changes a few entries of 80,000.
  const oldBytes = bytesOf(oldStats);
  const newBytes = bytesOf(newStats);
  const BLOCK = 64;
  const blockBytes = BLOCK * STAT_WORDS * 4;
  for (let k = 0; k < offsets.length; k++) {
    if (k % BLOCK === 0) {
      const at = k * STAT_WORDS * 4;
      const stop = Math.min(at + blockBytes, offsets.length * STAT_WORDS * 4);
      if (oldBytes.compare(newBytes, at, stop, at, stop) === 0) {
        k += BLOCK - 1;
        continue;
      }
    }
    const s = k * STAT_WORDS;
    let same = true;
    for (let w = 0; w < STAT_WORDS; w++) {
      if (w !== 6 && oldStats[s + w] !== newStats[s + w]) {
        same = false;
        break;
      }
    }
    if (same) continue;
    // The 40 bytes of stat words; word 6 is the entry's mode, which a restore keeps.
    const at = offsets[k]!;
    push(raw.subarray(from, at));
    const words = Buffer.allocUnsafe(40);
    for (let w = 0; w < STAT_WORDS; w++) {
      words.writeUInt32BE(w === 6 ? raw.readUInt32BE(at + 24) : newStats[s + w]!, 4 * w);
    }
    push(words);
    from = at + 40;
  }
  push(raw.subarray(from, end));
  parts.push(hash.digest());
  return parts;
}
