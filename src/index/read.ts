import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { PcheckoutError, fromSystem } from '../errors.js';
import { EntryList } from '../plan/entries.js';
import { STAT_WORDS } from './write.js';

/** Extended flag bits (the second 16-bit flags word of a version 3/4 entry). */
export const SKIP_WORKTREE = 0x4000;
export const INTENT_TO_ADD = 0x2000;

export interface IndexFile {
  version: 2 | 3 | 4;
  /** Every entry in file order (stages included); paths/oids/modes as an EntryList. */
  entries: EntryList;
  /** STAT_WORDS per entry, exactly as stored (the mode word here is the stored mode too). */
  stats: Uint32Array;
  /** Stage per entry (0 normal, 1-3 unmerged). */
  stages: Uint8Array;
  /** The extended flags word per entry (0 when the entry has none): SKIP_WORKTREE, INTENT_TO_ADD. */
  extFlags: Uint16Array;
  /** Assume-valid bit per entry (0/1). */
  assumeValid: Uint8Array;
  /** The index file's own mtime, for git's racy-entry rule. */
  mtime: { sec: number; nsec: number };
  /** Optional extensions (signature starts with A-Z) found, kept raw in file order. */
  extensions: { signature: string; data: Buffer }[];
  /** True when any entry has a stage other than 0. */
  unmerged: boolean;
  /** The file as read, and the byte offset of each entry in it (for an in-place update). */
  raw: Buffer;
  offsets: Uint32Array;
}

const HEADER = 12;
const HASH = 20;
const ENTRY_FIXED = 62; // 10 stat words + 20-byte id + 16-bit flags
const MIN_ENTRY = 64; // the fixed part, at least a NUL, padded (v2/v3) or a varint and a NUL (v4)
const NAME_MASK = 0xfff;
const FLAG_ASSUME_VALID = 0x8000;
const FLAG_EXTENDED = 0x4000;
const KNOWN_EXT_FLAGS = SKIP_WORKTREE | INTENT_TO_ADD;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFGITLINK = 0o160000;
const S_IFDIR = 0o040000;

/**
 * Reads the git index at `path` (gitformat-index versions 2, 3 and 4); returns null when the file
 * does not exist. Throws ERR_CORRUPT_INDEX for a malformed file or a bad checksum, and
 * ERR_UNSUPPORTED for a split or sparse index or any other required extension.
 */
export function readIndex(path: string): IndexFile | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fromSystem(err, 'open', path);
  }
  let buf: Buffer;
  let mtime: { sec: number; nsec: number };
  try {
    const st = fstatSync(fd, { bigint: true });
    mtime = { sec: Number(st.mtimeNs / 1_000_000_000n), nsec: Number(st.mtimeNs % 1_000_000_000n) };
    buf = Buffer.allocUnsafe(Number(st.size));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break; // shrank while we read: the checks below report it
      got += n;
    }
    buf = buf.subarray(0, got);
  } catch (err) {
    throw fromSystem(err, 'read', path);
  } finally {
    closeSync(fd);
  }
  return parseIndex(buf, path, mtime);
}

/** Copies `n` bytes, four at a time (the names are short: a native copy costs more). */
function copyBytes(src: DataView, from: number, dst: DataView, to: number, n: number): void {
  let k = 0;
  for (; k + 4 <= n; k += 4) dst.setUint32(to + k, src.getUint32(from + k, true), true);
  for (; k < n; k++) dst.setUint8(to + k, src.getUint8(from + k));
}

/**
 * memcmp order of the `alen` bytes at `a` and the `blen` at `b` (shorter first on a tie), both
 * in `v`; their first `same` bytes are known to be equal. Compares big-endian words: unsigned
 * word order is byte order.
 */
function compareBytes(
  v: DataView,
  a: number,
  alen: number,
  b: number,
  blen: number,
  same: number,
): number {
  const m = alen < blen ? alen : blen;
  let k = same;
  for (; k + 4 <= m; k += 4) {
    const x = v.getUint32(a + k);
    const y = v.getUint32(b + k);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; k < m; k++) {
    const d = v.getUint8(a + k) - v.getUint8(b + k);
    if (d !== 0) return d;
  }
  return alen - blen;
}

function corrupt(path: string, what: string): PcheckoutError {
  return new PcheckoutError('ERR_CORRUPT_INDEX', `corrupt index file ${path}: ${what}`, { path });
}

function unsupported(path: string, what: string): PcheckoutError {
  return new PcheckoutError('ERR_UNSUPPORTED', `index file ${path}: ${what}`, { path });
}

function parseIndex(buf: Buffer, path: string, mtime: { sec: number; nsec: number }): IndexFile {
  if (buf.length < HEADER + HASH) {
    throw corrupt(path, `${buf.length} bytes is too short for an index`);
  }
  if (buf.readUInt32BE(0) !== 0x44495243) throw corrupt(path, 'no DIRC signature');
  const v = buf.readUInt32BE(4);
  if (v !== 2 && v !== 3 && v !== 4) {
    if (v > 4) throw unsupported(path, `index version ${v} is not supported (only 2, 3 and 4)`);
    throw corrupt(path, `bad index version ${v}`);
  }
  const version: 2 | 3 | 4 = v;
  const end = buf.length - HASH;
  let zeroHash = true;
  for (let k = end; k < buf.length; k++) if (buf[k] !== 0) zeroHash = false;
  // An all-zero checksum means the writer skipped it (index.skipHash).
  if (
    !zeroHash &&
    !createHash('sha1').update(buf.subarray(0, end)).digest().equals(buf.subarray(end))
  ) {
    throw corrupt(path, 'bad checksum (the file is damaged or truncated)');
  }
  const count = buf.readUInt32BE(8);
  if (count > Math.floor((end - HEADER) / MIN_ENTRY)) {
    throw corrupt(path, `the header claims ${count} entries, more than the file can hold`);
  }

  const oids = Buffer.allocUnsafe(20 * count);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const oidView = new DataView(oids.buffer, oids.byteOffset, oids.byteLength);
  const modes = new Uint32Array(count);
  const stats = new Uint32Array(count * STAT_WORDS);
  const stages = new Uint8Array(count);
  const extFlags = new Uint16Array(count);
  const assumeValid = new Uint8Array(count);
  const offsets = new Uint32Array(count);
  // Versions 2/3 store each name whole with its NUL: the names fit in what the fixed parts leave.
  // Version 4's shared prefixes make them longer than stored: that buffer grows as needed.
  const nameBytes = end - HEADER - ENTRY_FIXED * count;
  let paths = Buffer.allocUnsafe(version === 4 ? Math.max(4096, 4 * nameBytes) : nameBytes);
  let pathView = new DataView(paths.buffer, paths.byteOffset, paths.byteLength);

  // Problems that do not stop the walk are reported after the extensions, so that a split or
  // sparse index (whose entries break the rules of a plain one) is reported as such.
  let problem: string | null = null;
  let sparseDir = -1;
  let unmerged = false;

  let pos = HEADER;
  let out = 0; // write position in `paths`
  let prevStart = 0;
  let prevLen = 0;
  let prevStage = 0;
  for (let i = 0; i < count; i++) {
    if (pos + ENTRY_FIXED > end) throw corrupt(path, `entry ${i} runs past the end of the file`);
    offsets[i] = pos;
    const s = i * STAT_WORDS;
    for (let w = 0; w < STAT_WORDS; w++) stats[s + w] = view.getUint32(pos + 4 * w);
    const mode = stats[s + 6]!;
    modes[i] = mode;
    // The id's 20 bytes as 5 words, byte order kept.
    for (let w = 0, o = 20 * i; w < 20; w += 4) {
      oidView.setUint32(o + w, view.getUint32(pos + 40 + w, true), true);
    }
    const flags = view.getUint16(pos + 60);
    const stage = (flags >>> 12) & 3;
    stages[i] = stage;
    if (stage !== 0) unmerged = true;
    if (flags & FLAG_ASSUME_VALID) assumeValid[i] = 1;
    let p = pos + ENTRY_FIXED;
    if (flags & FLAG_EXTENDED) {
      if (version === 2) throw corrupt(path, `entry ${i} has extended flags in a version 2 index`);
      if (p + 2 > end) throw corrupt(path, `entry ${i} runs past the end of the file`);
      const ext = (buf[p]! << 8) | buf[p + 1]!;
      if (ext & ~KNOWN_EXT_FLAGS) {
        throw corrupt(path, `entry ${i} has unknown extended flags 0x${ext.toString(16)}`);
      }
      extFlags[i] = ext;
      p += 2;
    }
    let len = flags & NAME_MASK;
    let same = 0; // leading bytes known to equal the previous path's
    if (version === 4) {
      // N: bytes to strip from the previous path (the OFS_DELTA varint), then the new suffix.
      if (p >= end) throw corrupt(path, `entry ${i} runs past the end of the file`);
      let c = buf[p++]!;
      let strip = c & 0x7f;
      while (c & 0x80) {
        if (p >= end || strip > prevLen) break;
        c = buf[p++]!;
        strip = (strip + 1) * 128 + (c & 0x7f);
      }
      if (strip > prevLen) {
        throw corrupt(path, `entry ${i} strips more than the previous path's ${prevLen} bytes`);
      }
      if (c & 0x80) throw corrupt(path, `entry ${i} runs past the end of the file`);
      same = prevLen - strip;
      let suffix: number;
      if (len === NAME_MASK) {
        const nul = buf.indexOf(0, p);
        if (nul < 0 || nul >= end) throw corrupt(path, `the path of entry ${i} has no end`);
        suffix = nul - p;
        len = same + suffix;
        if (len < NAME_MASK) throw corrupt(path, `entry ${i}'s name length field is wrong`);
      } else {
        suffix = len - same;
        if (suffix < 0) throw corrupt(path, `entry ${i}'s name length field is wrong`);
        if (p + suffix >= end) throw corrupt(path, `the path of entry ${i} runs past the end`);
        if (buf[p + suffix] !== 0) throw corrupt(path, `entry ${i}'s name length field is wrong`);
      }
      if (out + len + 1 > paths.length) {
        const grown = Buffer.allocUnsafe(Math.max(2 * paths.length, out + len + 1));
        paths.copy(grown, 0, 0, out);
        paths = grown;
        pathView = new DataView(paths.buffer, paths.byteOffset, paths.byteLength);
      }
      copyBytes(pathView, prevStart, pathView, out, same);
      copyBytes(view, p, pathView, out + same, suffix);
      pos = p + suffix + 1;
    } else {
      if (len === NAME_MASK) {
        const nul = buf.indexOf(0, p);
        if (nul < 0 || nul >= end) throw corrupt(path, `the path of entry ${i} has no end`);
        len = nul - p;
        if (len < NAME_MASK) throw corrupt(path, `entry ${i}'s name length field is wrong`);
      } else if (p + len >= end) {
        throw corrupt(path, `the path of entry ${i} runs past the end of the file`);
      } else if (buf[p + len] !== 0) {
        throw corrupt(path, `entry ${i}'s name length field is wrong`);
      }
      // 1-8 NULs pad the entry to a multiple of 8 bytes.
      const next = pos + ((p - pos + len + 8) & ~7);
      if (next > end) throw corrupt(path, `entry ${i} runs past the end of the file`);
      copyBytes(view, p, pathView, out, len);
      pos = next;
    }
    paths[out + len] = 0;

    if (problem === null) {
      if (len === 0) problem = `entry ${i} has an empty path`;
      else if ((mode & S_IFMT) === S_IFDIR) {
        if (sparseDir < 0) sparseDir = i;
      } else if (
        (mode & S_IFMT) !== S_IFREG &&
        (mode & S_IFMT) !== S_IFLNK &&
        (mode & S_IFMT) !== S_IFGITLINK
      ) {
        problem = `entry ${i} has an invalid mode ${mode.toString(8)}`;
      }
      if (i > 0 && problem === null) {
        // Sorted by path bytes (memcmp order, shorter first on a tie), then by stage.
        const cmp = compareBytes(pathView, prevStart, prevLen, out, len, same);
        if (cmp > 0) problem = `entries ${i - 1} and ${i} are not sorted by path`;
        else if (cmp === 0 && (prevStage === 0 || stage <= prevStage)) {
          problem = `entries ${i - 1} and ${i} have the same path and ${
            prevStage === 0 || stage === 0 ? 'a merged stage' : 'unordered stages'
          }`;
        }
      }
    }
    prevStart = out;
    prevLen = len;
    prevStage = stage;
    out += len + 1;
  }

  const extensions: { signature: string; data: Buffer }[] = [];
  while (pos < end) {
    if (end - pos < 8) throw corrupt(path, `${end - pos} stray bytes after the last extension`);
    const signature = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32BE(pos + 4);
    if (size > end - pos - 8) {
      throw corrupt(path, `extension ${JSON.stringify(signature)} runs past the end of the file`);
    }
    const first = buf[pos]!;
    if (first >= 0x41 && first <= 0x5a) {
      // Optional (A-Z): kept, copied so the file's buffer is not held.
      extensions.push({ signature, data: Buffer.from(buf.subarray(pos + 8, pos + 8 + size)) });
    } else if (signature === 'link') {
      throw unsupported(
        path,
        'a split index is not supported; run `git update-index --no-split-index` ' +
          '(and unset core.splitIndex) first',
      );
    } else if (signature === 'sdir') {
      throw unsupported(
        path,
        'a sparse index is not supported; run `git sparse-checkout set --no-sparse-index` ' +
          '(or `git sparse-checkout disable`) first',
      );
    } else if (/^[a-z][A-Za-z]{3}$/.test(signature)) {
      throw unsupported(
        path,
        `the index has the required extension ${JSON.stringify(signature)}, which pcheckout does not know`,
      );
    } else {
      throw corrupt(path, `bad extension signature ${JSON.stringify(signature)}`);
    }
    pos += 8 + size;
  }
  if (sparseDir >= 0) {
    throw unsupported(
      path,
      `entry ${sparseDir} is a directory (a sparse index), which is not supported; ` +
        'run `git sparse-checkout set --no-sparse-index` first',
    );
  }
  if (problem !== null) throw corrupt(path, problem);

  // The unused tail of `paths` was never written, so it costs address space, not memory.
  const entries = new EntryList({ count, paths: paths.subarray(0, out), oids, modes });
  // The list finds each path's end by its NUL: a NUL inside a path ends the list early.
  if (entries.starts[count] !== out) throw corrupt(path, 'a path contains a NUL byte');
  return {
    version,
    entries,
    stats,
    stages,
    extFlags,
    assumeValid,
    mtime,
    extensions,
    unmerged,
    raw: buf,
    offsets,
  };
}
