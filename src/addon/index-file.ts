/**
 * The addon's index-file work (native/binding/index.cc over native/index/): the file mapped,
 * its entries parsed, an index and its cache-tree extension serialized.
 */
import type { NativePathList } from './rows.js';
import type { NativeTreeDirs } from './odb.js';

export interface IndexExports {
  /** The whole file as a read-only mapping (never write to `data`), or null when it is absent. */
  mapFile(
    path: string,
  ): { data: Buffer; mtimeSec: number; mtimeNsec: number; identity: string } | null;
  /**
   * Drops the pages of a file mapFile mapped (its `data`, whole) from this process: they count
   * in its RSS while mapped, and a later read faults them back in from the page cache. False
   * (nothing done) for any other Buffer.
   */
  releaseMapped(data: Buffer): boolean;
  /** The entries of an index file (its first `end` bytes, header included) as flat arrays. */
  parseIndexEntries(
    file: Buffer,
    end: number,
    version: number,
    count: number,
  ): {
    /** Room for the paths; the first pathsLength bytes hold them. */
    paths: Buffer;
    pathsLength: number;
    oids: Buffer;
    modes: Uint32Array;
    stats: Uint32Array;
    stages: Uint8Array;
    extFlags: Uint16Array;
    assumeValid: Uint8Array;
    offsets: Uint32Array;
    /** count + 1: where each path starts in `paths`. */
    starts: Uint32Array;
    endOfEntries: number;
    unmerged: boolean;
    problem?: string;
    /** The first sparse directory entry (-1: none), and how many there are. */
    sparseDir: number;
    sparseDirs: number;
  };
  /**
   * An index file's bytes for `list` (entries at stage 0, `stats` STAT_WORDS each, the mode
   * recorded being the list's), then the extensions, then 20 zero bytes for the checksum.
   * Versions 3 and 4 write the extended flags of entries that have any. With `from`/`to`, the
   * part of the file with entries [from, to): the header only in the part from 0, the
   * extensions and the checksum's room only in the part to the last entry.
   */
  serializeIndex(
    list: NativePathList,
    stats: Uint32Array,
    extFlags: Uint16Array | null,
    version: 2 | 3 | 4,
    extensions: Buffer[],
    from?: number,
    to?: number,
  ): Buffer;
  /**
   * The same file written whole to descriptor `fd` (at its offset) as it is serialized, a part
   * of entries at a time, the checksum computed and written last: 0, or the errno of the write
   * that failed (EIO where hashing failed).
   */
  writeIndexFile(
    fd: number,
    list: NativePathList,
    stats: Uint32Array,
    extFlags: Uint16Array | null,
    version: 2 | 3 | 4,
    extensions: Buffer[],
  ): number;
  /**
   * Whether that file is `file` byte for byte: an index read, its checksum verified (a file
   * ending in 20 zero bytes never is). Compared as it is serialized, a part at a time; when
   * `file` is a mapping of mapFile's, its pages are dropped from the process as they are
   * compared (any other Buffer is left as it is).
   */
  indexFileEquals(
    file: Buffer,
    list: NativePathList,
    stats: Uint32Array,
    extFlags: Uint16Array | null,
    version: 2 | 3 | 4,
    extensions: Buffer[],
  ): boolean;
  /**
   * The TREE extension (signature, size, data) of a walk's directories, each valid but those
   * above the NUL-terminated paths of `differing`; a sparse index's directories (`sparse`) one
   * entry each, with nothing below them.
   */
  cacheTreeExtension(
    dirs: NativeTreeDirs,
    differing: Buffer,
    sparse?: { paths: Buffer; oids: Buffer } | null,
  ): Buffer;
  /**
   * An index's TREE extension (its data) written whole again, not valid above the
   * NUL-terminated paths of `differing`; null when the data is malformed.
   */
  invalidateCacheTree(data: Buffer, differing: Buffer): Buffer | null;
}
