/**
 * The addon's writer (native/binding/write.cc over native/write/): write requests and their
 * results, the parallel writer, the durability barriers.
 */
import type { NativeConversion } from './convert.js';
import type { NativeOdb } from './odb.js';

/** A write request for the native writer; every array has one element per path. */
export interface NativeWriteRequest {
  root: string;
  /** NUL-terminated relative paths, concatenated. */
  paths: Buffer;
  /** 20 bytes per path. */
  oids: Buffer;
  modes: Uint32Array;
  /** Inflated sizes (0 when unknown) so the writer can stream large blobs. */
  sizes: Float64Array;
  /** WRITE_REPLACE per path where an old file or symlink must be unlinked first. */
  flags?: Uint8Array;
  streamThreshold: number;
  /** Per-file step before close: 0 none, 1 fsync, 2 sync_file_range(WRITE) (see write/durability.ts). */
  sync?: number;
  /** One per path: the bytes to write instead of the blob (a filter's output). */
  contents?: Buffer[];
  /** Content conversions (at most 255), referred to by `convert`. */
  conversions?: NativeConversion[];
  /** Per path: 0 = the blob's bytes, k = conversions[k - 1]. */
  convert?: Uint8Array;
  /**
   * The store's layout directory (native/write/store.h): files it holds are imported, the
   * others added as they are written; not with `contents`.
   */
  store?: string;
  /** With `store`: hard-link the files it holds (read-only files), copy only where that fails. */
  storeLink?: boolean;
}

export type StoreMethodName = 'hardlink' | 'reflink' | 'copy' | 'write';

/** A request's dealings with the store (with `store` only). */
export interface NativeStoreCounts {
  imported: number;
  inserted: number;
  insertedBytes: number;
  /** Entries whose size was not as recorded: removed, the file written from the pack. */
  repaired: number;
  /** Imports or inserts that failed (the files were written anyway); the first one's reason. */
  failed: number;
  firstError: string;
  /** The method of the request's last transfer (null: none). */
  method: StoreMethodName | null;
}

/** fsync of many paths under a root (files or directories, "." for the root). */
export interface NativeFsyncRequest {
  root: string;
  /** NUL-terminated relative paths, concatenated. */
  paths: Buffer;
  /** Native threads to spread the fsyncs over (1–1024). */
  threads?: number;
}

export interface NativeWriteResult {
  /** `statWords` words per path, in index-entry order (ctime, mtime, dev, ino, mode, uid, gid, size). */
  stats: Uint32Array;
  /** 0 written, 1 collided, 2 failed. */
  status: Int32Array;
  errors: { index: number; code: string; message: string }[];
  /** Files written anyway, with git's complaint (e.g. "failed to encode"). */
  warnings: { index: number; message: string }[];
  bytes: number;
  /** Stopped by the cancel flag before its last file (writeParallel only): not all written. */
  cancelled?: boolean;
  store?: NativeStoreCounts;
}

/** A chunk's result as writeParallel hands it over, or why the whole chunk failed. */
export type NativeChunkResult = NativeWriteResult | { failure: { code: string; message: string } };

export interface WriteExports {
  /**
   * Writes the chunks on one native thread per reader (each reader used by one thread only,
   * marked busy until the promise settles). `onChunk` gets each chunk's result as it finishes,
   * all before the promise settles; a nonzero `cancel[0]` (Atomics.store) or a throw from
   * `onChunk` stops every thread before its next file (a throw rejects the promise): a chunk
   * stopped part-way is reported `cancelled`, the chunks not started then are not reported.
   * Threads take chunks in list order; with `groups` (one per chunk, each below the number of
   * chunks), at most `perGroup` (default 1) chunks of one group run at a time.
   */
  writeParallel(
    readers: NativeOdb[],
    chunks: NativeWriteRequest[],
    cancel: Int32Array,
    onChunk: (chunk: number, result: NativeChunkResult) => void,
    groups?: Uint32Array,
    perGroup?: number,
  ): Promise<void>;
  /** Whether writes open files with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH), probed once at load. */
  openat2: boolean;
  /** syncfs(2) of the filesystem holding root. */
  syncFilesystem(root: string): void;
  /** 0 or the errno of each path's fsync. */
  fsyncPaths(req: NativeFsyncRequest): Int32Array;
}
