import { createHash } from 'node:crypto';
import type { EntryList } from '../plan/entries.js';

/** Stat words per entry, in index-entry order (see native/writer.h). */
export const STAT_WORDS = 10;

const ENTRY_FIXED = 62; // 10 stat words + 20-byte id + 16-bit flags

/**
 * Serializes a version 2 index (git's gitformat-index): header, entries with their stat data,
 * no extensions, and the trailing SHA-1 of everything before it.
 */
export function buildIndex(entries: EntryList, stats: Uint32Array): Buffer {
  let size = 12 + 20;
  for (let i = 0; i < entries.count; i++)
    size += entrySize(entries.starts[i + 1]! - entries.starts[i]! - 1);
  const buf = Buffer.alloc(size); // zero-filled: the NUL padding comes for free
  buf.write('DIRC', 0, 'latin1');
  buf.writeUInt32BE(2, 4);
  buf.writeUInt32BE(entries.count, 8);
  let pos = 12;
  for (let i = 0; i < entries.count; i++) {
    const s = i * STAT_WORDS;
    for (let w = 0; w < STAT_WORDS; w++) buf.writeUInt32BE(stats[s + w]!, pos + 4 * w);
    buf.writeUInt32BE(entries.modes[i]!, pos + 24); // the mode git records is the tree's, not st_mode
    entries.oids.copy(buf, pos + 40, 20 * i, 20 * i + 20);
    const start = entries.starts[i]!;
    const len = entries.starts[i + 1]! - start - 1;
    buf.writeUInt16BE(Math.min(len, 0xfff), pos + 60);
    entries.paths.copy(buf, pos + ENTRY_FIXED, start, start + len);
    pos += entrySize(len);
  }
  createHash('sha1').update(buf.subarray(0, pos)).digest().copy(buf, pos);
  return buf;
}

function entrySize(nameLen: number): number {
  // 1 to 8 NULs pad the entry to a multiple of 8.
  return (ENTRY_FIXED + nameLen + 8) & ~7;
}
