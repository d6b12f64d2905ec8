import { createHash } from 'node:crypto';
import { PcheckoutError } from '../errors.js';
import type { EntryList } from '../plan/entries.js';

/** Stat words per entry, in index-entry order (see native/writer.h). */
export const STAT_WORDS = 10;

const ENTRY_FIXED = 62; // 10 stat words + 20-byte id + 16-bit flags
const FLAG_EXTENDED = 0x4000;
const KNOWN_EXT_FLAGS = 0x6000; // SKIP_WORKTREE | INTENT_TO_ADD (see read.ts)

export interface BuildIndexOptions {
  /** Index format version; default 2. Raised to 3 when any entry has extended flags. */
  version?: 2 | 3 | 4 | undefined;
  /** The extended flags word per entry (SKIP_WORKTREE, INTENT_TO_ADD), 0 for none. */
  extFlags?: Uint16Array | undefined;
}

/**
 * Serializes an index (git's gitformat-index): header, entries with their stat data (all at
 * stage 0), no extensions, and the trailing SHA-1 of everything before it. Version 2 by default;
 * version 3 at least when an entry has extended flags (only those entries carry the extra word);
 * version 4 prefix-compresses the paths and drops the padding.
 */
export function buildIndex(
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions = {},
): Buffer {
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
  if (version === 4) return buildV4(entries, stats, extended ? extFlags! : undefined);

  let size = 12 + 20;
  for (let i = 0; i < count; i++) {
    const fixed = extended && extFlags![i] !== 0 ? ENTRY_FIXED + 2 : ENTRY_FIXED;
    size += entrySize(fixed, entries.starts[i + 1]! - entries.starts[i]! - 1);
  }
  const buf = Buffer.alloc(size); // zero-filled: the NUL padding comes for free
  writeHeader(buf, version, count);
  let pos = 12;
  for (let i = 0; i < count; i++) {
    writeFixed(buf, pos, entries, stats, i);
    const start = entries.starts[i]!;
    const len = entries.starts[i + 1]! - start - 1;
    const ext = extended ? extFlags![i]! : 0;
    let fixed = ENTRY_FIXED;
    if (ext !== 0) {
      buf.writeUInt16BE(FLAG_EXTENDED | Math.min(len, 0xfff), pos + 60);
      buf.writeUInt16BE(ext, pos + 62);
      fixed += 2;
    } else {
      buf.writeUInt16BE(Math.min(len, 0xfff), pos + 60);
    }
    entries.paths.copy(buf, pos + fixed, start, start + len);
    pos += entrySize(fixed, len);
  }
  createHash('sha1').update(buf.subarray(0, pos)).digest().copy(buf, pos);
  return buf;
}

/** Version 4: each path is (bytes to strip from the previous path, new suffix), unpadded. */
function buildV4(
  entries: EntryList,
  stats: Uint32Array,
  extFlags: Uint16Array | undefined,
): Buffer {
  const count = entries.count;
  const { paths, starts } = entries;
  const keep = new Uint32Array(count); // bytes shared with the previous path
  let size = 12 + 20;
  let prevStart = 0;
  let prevLen = 0;
  for (let i = 0; i < count; i++) {
    const start = starts[i]!;
    const len = starts[i + 1]! - start - 1;
    const m = len < prevLen ? len : prevLen;
    let k = 0;
    while (k < m && paths[prevStart + k] === paths[start + k]) k++;
    keep[i] = k;
    const fixed = extFlags !== undefined && extFlags[i] !== 0 ? ENTRY_FIXED + 2 : ENTRY_FIXED;
    size += fixed + varintSize(prevLen - k) + len - k + 1;
    prevStart = start;
    prevLen = len;
  }
  const buf = Buffer.alloc(size);
  writeHeader(buf, 4, count);
  let pos = 12;
  prevLen = 0;
  for (let i = 0; i < count; i++) {
    writeFixed(buf, pos, entries, stats, i);
    const start = starts[i]!;
    const len = starts[i + 1]! - start - 1;
    const ext = extFlags !== undefined ? extFlags[i]! : 0;
    pos += ENTRY_FIXED;
    if (ext !== 0) {
      buf.writeUInt16BE(FLAG_EXTENDED | Math.min(len, 0xfff), pos - 2);
      buf.writeUInt16BE(ext, pos);
      pos += 2;
    } else {
      buf.writeUInt16BE(Math.min(len, 0xfff), pos - 2);
    }
    const k = keep[i]!;
    pos = writeVarint(buf, pos, prevLen - k);
    entries.paths.copy(buf, pos, start + k, start + len);
    pos += len - k + 1; // the NUL is already there
    prevLen = len;
  }
  createHash('sha1').update(buf.subarray(0, pos)).digest().copy(buf, pos);
  return buf;
}

function writeHeader(buf: Buffer, version: number, count: number): void {
  buf.write('DIRC', 0, 'latin1');
  buf.writeUInt32BE(version, 4);
  buf.writeUInt32BE(count, 8);
}

/** The stat words, mode and object id of entry `i` at `pos`. */
function writeFixed(
  buf: Buffer,
  pos: number,
  entries: EntryList,
  stats: Uint32Array,
  i: number,
): void {
  const s = i * STAT_WORDS;
  for (let w = 0; w < STAT_WORDS; w++) buf.writeUInt32BE(stats[s + w]!, pos + 4 * w);
  buf.writeUInt32BE(entries.modes[i]!, pos + 24); // the mode git records is the tree's, not st_mode
  entries.oids.copy(buf, pos + 40, 20 * i, 20 * i + 20);
}

function entrySize(fixed: number, nameLen: number): number {
  // 1 to 8 NULs pad the entry to a multiple of 8.
  return (fixed + nameLen + 8) & ~7;
}

// The varint of OFS_DELTA offsets: big-endian groups of 7 bits, each continued group biased by 1.
function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128) - 1;
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  const size = varintSize(n);
  let at = pos + size - 1;
  buf[at] = n & 0x7f;
  while (n >= 128) {
    n = Math.floor(n / 128) - 1;
    buf[--at] = 0x80 | (n & 0x7f);
  }
  return pos + size;
}

/**
 * The old index with new stat data where it changed, everything else — entries, flags,
 * extensions — byte for byte: the index of a restore, whose entries are the old ones. Cheaper
 * than serializing 80,000 entries again, and the TREE and other extensions stay valid.
 */
export function patchIndex(
  raw: Buffer,
  offsets: Uint32Array,
  oldStats: Uint32Array,
  newStats: Uint32Array,
): Buffer {
  const out = Buffer.from(raw);
  const count = offsets.length;
  for (let k = 0; k < count; k++) {
    const s = k * STAT_WORDS;
    let same = true;
    for (let w = 0; w < STAT_WORDS; w++) {
      if (w !== 6 && oldStats[s + w] !== newStats[s + w]) {
        same = false;
        break;
      }
    }
    if (same) continue;
    // Word 6 is the entry's mode, which a restore keeps.
    for (let w = 0; w < STAT_WORDS; w++) {
      if (w !== 6) out.writeUInt32BE(newStats[s + w]!, offsets[k]! + 4 * w);
    }
  }
  const end = out.length - 20;
  createHash('sha1').update(out.subarray(0, end)).digest().copy(out, end);
  return out;
}
