import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { PcheckoutError } from './errors.js';

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
}

/** fsync of many paths under a root (files or directories, "." for the root). */
export interface NativeFsyncRequest {
  root: string;
  /** NUL-terminated relative paths, concatenated. */
  paths: Buffer;
  /** Native threads to spread the fsyncs over (1–1024). */
  threads?: number;
}

/** lstat of many paths under a root, never through a symlinked leading directory. */
export interface NativeStatRequest {
  root: string;
  /** NUL-terminated relative paths, concatenated. */
  paths: Buffer;
  /** Native threads to spread the lstats over (1–1024; fewer for few paths). */
  threads?: number;
  /** Index entries to judge each path against (git's ie_match_stat), one per path. */
  expect?: {
    compare: Uint8Array;
    modes: Uint32Array;
    stats: Uint32Array;
    racySeconds: number;
    fileMode: boolean;
  };
}

export interface NativeStatResult {
  /** STAT_WORDS per path (the mode word is st_mode); zero unless status is STAT_PRESENT. */
  stats: Uint32Array;
  /** STAT_PRESENT, STAT_ABSENT (nothing there, or a leading component is not a directory), STAT_FAILED (errno in the mode word). */
  status: Int32Array;
  /** Per path with an expectation: VERDICT_CLEAN, VERDICT_DIRTY, VERDICT_HASH (else 0). */
  verdict: Uint8Array;
}

export interface NativeWriteResult {
  /** `statWords` words per path, in index-entry order (ctime, mtime, dev, ino, mode, uid, gid, size). */
  stats: Uint32Array;
  /** 0 written, 1 collided, 2 failed. */
  status: Int32Array;
  errors: { index: number; code: string; message: string }[];
  bytes: number;
}

export interface NativeTree {
  count: number;
  paths: Buffer;
  oids: Buffer;
  modes: Uint32Array;
}

export interface NativePathVerdict {
  index: number;
  rule: string;
  text: string;
}

export interface NativeOdb {
  read(oid: Buffer): { type: 'commit' | 'tree' | 'blob' | 'tag'; data: Buffer };
  /** `protect`: 1 core.protectNTFS | 2 core.protectHFS (see plan/paths.ts). */
  walkTree(oid: Buffer, protect: number): NativeTree;
  /** Four numbers per id: pack (-1 loose, -2 missing), offset, inflated size, type. */
  info(oids: Buffer): Float64Array;
  resolvePrefix(hex: string): { count: number; oid?: Buffer };
  writeFiles(req: NativeWriteRequest): NativeWriteResult;
  writeFilesAsync(req: NativeWriteRequest): Promise<NativeWriteResult>;
  /** Frees the delta-base cache; the reader stays usable. */
  releaseCache(): void;
  close(): void;
}

export interface Addon {
  Odb: new (objectDirs: string[], cacheBytes: number) => NativeOdb;
  statFiles(req: NativeStatRequest): NativeStatResult;
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
    sparseDir: number;
  };
  /** git's verify_path for one path (exact bytes): null, or the rule that refuses it. */
  verifyPath(path: Buffer, mode: number, protect: number): NativePathVerdict | null;
  /** The first of many NUL-terminated paths (one mode each) git would refuse, or null. */
  verifyPaths(paths: Buffer, modes: Uint32Array, protect: number): NativePathVerdict | null;
  /** Whether writes open files with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH), probed once at load. */
  openat2: boolean;
  /** syncfs(2) of the filesystem holding root. */
  syncFilesystem(root: string): void;
  /** 0 or the errno of each path's fsync. */
  fsyncPaths(req: NativeFsyncRequest): Int32Array;
  inflater: 'libdeflate' | 'zlib';
  statWords: number;
}

export const FILE_COLLIDED = 1;
export const FILE_FAILED = 2;
export const WRITE_REPLACE = 1;
export const STAT_PRESENT = 0;
export const STAT_ABSENT = 1;
export const STAT_FAILED = 2;
export const VERDICT_CLEAN = 1;
export const VERDICT_DIRTY = 2;
export const VERDICT_HASH = 3;

let cached: Addon | undefined;

/** Loads the addon once per thread; if it is missing, says what was tried and how to fix it. */
export function loadAddon(): Addon {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const candidates = [
    process.env['PCHECKOUT_ADDON'],
    join(root, 'build', 'Release', 'pcheckout.node'),
    join(root, 'build', 'Debug', 'pcheckout.node'),
  ].filter((p): p is string => typeof p === 'string' && p.length > 0);
  const failures: string[] = [];
  for (const candidate of candidates) {
    if (!existsSync(candidate)) {
      failures.push(`${candidate}: not found`);
      continue;
    }
    try {
      cached = require(candidate) as Addon;
      return cached;
    } catch (err) {
      failures.push(`${candidate}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new PcheckoutError(
    'ERR_ADDON_LOAD',
    [
      'pcheckout could not load its native addon. Tried:',
      ...failures.map((f) => `  - ${f}`),
      'To build it: install a C++ compiler, python3 and make (Debian: apt-get install g++ make python3 zlib1g-dev libdeflate-dev),',
      `then run "npm rebuild pcheckout" (or "npx node-gyp rebuild" in ${root}).`,
    ].join('\n'),
  );
}
