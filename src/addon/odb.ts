/**
 * The addon's object database (native/binding/odb.cc over native/odb/ and the tree walk of
 * native/plan/tree.cc): a reader per thread, what the readers decoded.
 */
import type { NativePathList } from './rows.js';
import type { NativeWriteRequest, NativeWriteResult } from './write.js';

/** Objects decoded by a checkout's readers (all threads). */
export interface NativeDecodeStats {
  /** zlib streams inflated (pack entries and loose objects) and their inflated bytes. */
  inflations: number;
  inflatedBytes: number;
  /** Delta applications. */
  deltas: number;
  /** Objects served by a reader's delta-base cache instead of being decoded. */
  cacheHits: number;
  /** Delta bases decoded, and how many of those decodes repeated one already done (by any reader). */
  baseDecodes: number;
  baseBytes: number;
  repeatedBaseDecodes: number;
  repeatedBaseBytes: number;
  /** False when a reader decoded more bases than it records (counts stay exact, repeats undercount). */
  complete: boolean;
}

export interface NativeTree {
  count: number;
  paths: Buffer;
  /** Where each path starts in `paths`; starts[count] is one past the last NUL. */
  starts: Uint32Array;
  oids: Buffer;
  modes: Uint32Array;
  dirs: NativeTreeDirs;
}

/** A walk's directories in pre-order (the root first): git's cache-tree nodes. */
export interface NativeTreeDirs {
  count: number;
  /** Each directory's path with its final '/' ('' for the root), and a NUL. */
  paths: Buffer;
  /** 20 bytes per directory: its tree's id. */
  oids: Buffer;
  /** Three words per directory: its first entry, one past its last, its subdirectories. */
  ranges: Uint32Array;
}

export interface NativeOdb {
  read(oid: Buffer): { type: 'commit' | 'tree' | 'blob' | 'tag'; data: Buffer };
  /**
   * `protect`: 1 core.protectNTFS | 2 core.protectHFS (see plan/paths.ts). With `keep`, the
   * walk is kept until releaseCache; later walks copy the subtrees it shares, and those
   * lendIndex lent.
   */
  walkTree(oid: Buffer, protect: number, keep?: boolean): NativeTree;
  /**
   * Lends the index's entries under the directories its cache-tree (the TREE extension's data)
   * names to the walks on this reader until releaseCache, holding its arrays until then;
   * returns how many directories may be lent and, when all of it may, the id of the tree the
   * index holds. The index's paths must have been checked under `protect` (verifyPaths).
   */
  lendIndex(
    index: NativePathList,
    stages: Uint8Array,
    extFlags: Uint16Array,
    cacheTree: Buffer,
    protect: number,
  ): { lent: number; root: Buffer | null };
  /**
   * Four numbers per id: pack (-1 loose, -2 missing), offset, inflated size, type. `order`, if
   * given (one element per id), gets the positions in the order they were looked up: by pack
   * and offset, then the loose and missing ones as given.
   */
  info(oids: Buffer, order?: Int32Array): Float64Array;
  /**
   * The flag (slot 0, shared memory the caller's thread sets) that this reader's long steps —
   * info, walkTree — look at every few thousand items, stopping with ERR_ABORTED; null: none.
   */
  setCancel(flag: Int32Array | null): void;
  resolvePrefix(hex: string): { count: number; oid?: Buffer };
  writeFiles(req: NativeWriteRequest): NativeWriteResult;
  writeFilesAsync(req: NativeWriteRequest): Promise<NativeWriteResult>;
  /** Frees the delta-base cache (and what releaseWalks frees); the reader stays usable. */
  releaseCache(): void;
  /**
   * Lets go of the kept walk and the lent index (their tables, and the JS arrays they held):
   * for when no more walks will copy from them; the delta-base cache stays.
   */
  releaseWalks(): void;
  close(): void;
}

export interface OdbExports {
  /** A reader with a new delta-base cache of cacheBytes, or sharing another reader's cache. */
  Odb: new (objectDirs: string[], cacheBytes: number | NativeOdb) => NativeOdb;
  /**
   * What the readers decoded since they were last asked, added together; each reader then
   * starts a new record. Bases are told apart by pack file and offset across readers.
   */
  decodeStats(readers: NativeOdb[]): NativeDecodeStats;
  inflater: 'libdeflate' | 'zlib';
}
