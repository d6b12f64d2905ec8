import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, type BigIntStats } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadAddon } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { EntryList } from '../plan/entries.js';
import { isNullOid, mergeSplitIndex, sharedIndexName, type SplitOrigin } from './split.js';

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
  /**
   * A sparse index (the `sdir` extension, or directory entries): how many sparse directory
   * entries it holds (mode 040000, a path ending in '/', skip-worktree), else 0 and false.
   */
  sparse: boolean;
  sparseDirs: number;
  /**
   * Set when these entries are a sparse index expanded (index/sparse.ts, expandIndex): the
   * file as read, and per entry here the entry of that file it is (-1: one from a directory).
   */
  expandedFrom?: { file: IndexFile; origin: Int32Array } | undefined;
  /**
   * Set for a split index (index/split.ts): the shared index its entries were merged with.
   * `raw` is then the index file itself, and `offsets` is empty (no in-place update).
   */
  split?: SplitOrigin | undefined;
}

const HEADER = 12;
/** Bytes of an index file's checksum (SHA-1). */
export const INDEX_HASH = 20;
const HASH = INDEX_HASH;
const MIN_ENTRY = 64; // the fixed part, at least a NUL, padded (v2/v3) or a varint and a NUL (v4)

/**
 * Reads the git index at `path` (gitformat-index versions 2, 3 and 4); returns null when the file
 * does not exist. Throws ERR_CORRUPT_INDEX for a malformed file, a bad checksum or a malformed
 * sparse directory entry, a split index whose shared index is missing or damaged, and
 * ERR_UNSUPPORTED for a required extension it does not know. A split index is read merged with
 * its shared index (index/split.ts); a sparse index as it is (its directory entries as
 * entries): see index/sparse.ts for its expansion.
 */
export function readIndex(path: string): IndexFile | null {
  const read = readIndexFile(path);
  if (read === null) return null;
  const { file, link } = read;
  if (link === null) return file;
  // The shared index lies beside the index file (git looks in the git directory first, which
  // is where pcheckout's index files are).
  const sharedPath = join(dirname(path), sharedIndexName(link, path));
  let shared: IndexFile | null = null;
  if (!isNullOid(link.subarray(0, HASH))) {
    const base = readIndexFile(sharedPath);
    if (base === null) {
      throw corrupt(path, `its shared index ${sharedPath} is missing (a split index)`);
    }
    if (base.link !== null) throw corrupt(sharedPath, 'a shared index is itself split');
    if (!base.file.raw.subarray(base.file.raw.length - HASH).equals(link.subarray(0, HASH))) {
      throw corrupt(sharedPath, `its checksum is not the one ${path} names`);
    }
    shared = base.file;
  }
  return mergeSplitIndex(file, link, path, sharedPath, shared);
}

/** One index file as it is: a split index's link extension apart, not yet merged. */
function readIndexFile(path: string): { file: IndexFile; link: Buffer | null } | null {
  // Mapped, not read: reading 8 MB (the Linux tree's index) into fresh memory faults in every
  // page, which costs more than parsing it.
  let mapped: ReturnType<ReturnType<typeof loadAddon>['mapFile']>;
  try {
    mapped = loadAddon().mapFile(path);
  } catch (err) {
    throw fromNative(err, `cannot read ${path}`);
  }
  if (mapped === null) return null;
  const read = parseIndex(
    mapped.data,
    path,
    { sec: mapped.mtimeSec, nsec: mapped.mtimeNsec },
    wroteHere(path, mapped.identity, mapped.data),
  );
  // Parsed (and its checksum checked), the file's pages are dropped from the process: they
  // counted in its RSS for as long as it ran (120 MB for a million entries) while only a
  // restore's patch, a no-op's compare and the extensions read the file again, faulting back
  // in from the page cache what they read.
  loadAddon().releaseMapped(mapped.data);
  return read;
}

/**
 * Index files this thread committed, by path: the identity the file had just after (from a
 * descriptor of its own) and its checksum. A warm engine reads back the index it wrote on the
 * call before; a file still of that identity with that checksum is the one written, whose
 * checksum was computed over the bytes as they were written: it is not hashed again (~105 ms
 * for the 120 MB index of a million entries). Anything else is hashed as usual.
 */
const committedHere = new Map<string, { identity: string; checksum: Buffer }>();

/**
 * A file's identity: a rename over it changes the inode, any write its ctime (nanoseconds).
 * The same string as mapFile's `identity` (native/base/mapped_file.h).
 */
export function fileIdentity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * After the index at `path` was committed: `checksum` is the one written (read back through the
 * lock's descriptor). Remembered only when the file now at `path` ends with it. Returns that
 * file's identity (null: it cannot be looked at).
 */
export function rememberCommitted(path: string, checksum: Buffer | null): string | null {
  committedHere.delete(path);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const st = fstatSync(fd, { bigint: true });
    const identity = fileIdentity(st);
    const at = Number(st.size) - (checksum?.length ?? 0);
    if (checksum === null || at < 0) return identity;
    const tail = Buffer.alloc(checksum.length);
    if (readSync(fd, tail, 0, tail.length, at) === tail.length && tail.equals(checksum))
      committedHere.set(path, { identity, checksum });
    return identity;
  } catch {
    return null; // nothing remembered, nothing trusted: the next read hashes it
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether the mapped file at `path` (of `identity`) is the one this thread committed there. */
function wroteHere(path: string, identity: string, data: Buffer): boolean {
  const known = committedHere.get(path);
  if (known === undefined || known.identity !== identity || data.length < HASH) return false;
  return data.subarray(data.length - HASH).equals(known.checksum);
}

function corrupt(path: string, what: string): PcheckoutError {
  return new PcheckoutError('ERR_CORRUPT_INDEX', `corrupt index file ${path}: ${what}`, { path });
}

function unsupported(path: string, what: string): PcheckoutError {
  return new PcheckoutError('ERR_UNSUPPORTED', `index file ${path}: ${what}`, { path });
}

function parseIndex(
  buf: Buffer,
  path: string,
  mtime: { sec: number; nsec: number },
  checksummed = false,
): { file: IndexFile; link: Buffer | null } {
  const { version, end, count } = checkHeader(buf, path, checksummed);

  // The loop over the entries is native: bounds-checked, and ten times faster than in JS on an
  // index of 80,000 entries (it dominated a restore's planning).
  let parsed;
  try {
    parsed = loadAddon().parseIndexEntries(buf, end, version, count);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e?.code === 'ERR_CORRUPT_INDEX') throw corrupt(path, e.message ?? 'malformed entry');
    throw fromNative(err, `cannot read ${path}`);
  }
  const { oids, modes, stats, stages, extFlags, assumeValid, offsets, unmerged } = parsed;
  const paths = parsed.paths.subarray(0, parsed.pathsLength);
  const problem = parsed.problem ?? null;
  const { extensions, link, sdir } = readExtensions(buf, parsed.endOfEntries, end, path);
  // A split index's own entries are unsorted, and replacements have empty names: its checks
  // are made as it is merged.
  if (problem !== null && link === null) throw corrupt(path, problem);

  const entries = new EntryList({ count, paths, oids, modes, starts: parsed.starts });
  const file: IndexFile = {
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
    sparse: sdir || parsed.sparseDirs > 0,
    sparseDirs: parsed.sparseDirs,
  };
  return { file, link };
}

/** The header and the checksum: the version, where the entries and extensions end, the count. */
function checkHeader(
  buf: Buffer,
  path: string,
  checksummed: boolean,
): { version: 2 | 3 | 4; end: number; count: number } {
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
  // `checksummed`: the file this thread wrote, as it wrote it (rememberCommitted).
  if (
    !zeroHash &&
    !checksummed &&
    !createHash('sha1').update(buf.subarray(0, end)).digest().equals(buf.subarray(end))
  ) {
    throw corrupt(path, 'bad checksum (the file is damaged or truncated)');
  }
  const count = buf.readUInt32BE(8);
  if (count > Math.floor((end - HEADER) / MIN_ENTRY)) {
    throw corrupt(path, `the header claims ${count} entries, more than the file can hold`);
  }

  return { version, end, count };
}

/**
 * The extensions after the entries, up to the checksum at `end`: the optional ones (A-Z) kept
 * raw, a split index's link, a sparse index's `sdir`; a required one pcheckout does not know is
 * ERR_UNSUPPORTED.
 */
function readExtensions(
  buf: Buffer,
  start: number,
  end: number,
  path: string,
): { extensions: { signature: string; data: Buffer }[]; link: Buffer | null; sdir: boolean } {
  let sdir = false;
  let link: Buffer | null = null;
  let pos = start;
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
      // A split index (index/split.ts): its entries are merged with the shared index's.
      link = Buffer.from(buf.subarray(pos + 8, pos + 8 + size));
    } else if (signature === 'sdir') {
      // A sparse index (gitformat-index, "Sparse Directory Entries"): no data.
      sdir = true;
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
  return { extensions, link, sdir };
}
