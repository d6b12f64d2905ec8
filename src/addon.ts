import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { PcheckoutError, isErrorCode } from './errors.js';

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
}

/** A content conversion (native/convert/convert.h): crlf 0 binary, 1 text-input, 2 text-crlf, 3 auto-input, 4 auto-crlf. */
export interface NativeConversion {
  crlf: number;
  ident: boolean;
  identInCore: boolean;
  encoding: string | null;
}

/** A conversion's output: null data when the bytes do not change; git's complaint, if any. */
export interface NativeConverted {
  data: Buffer | null;
  warning?: string;
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
    /** core.symlinks (default true): false takes a plain file for a symlink entry. */
    symlinks?: boolean;
    /**
     * git's checkout without refreshing the index first (checkout -f, checkout-index): a change
     * of the stat data git compares (whole seconds) is a change, not a reason to hash.
     */
    statChangeIsDirty?: boolean;
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
  /** Files written anyway, with git's complaint (e.g. "failed to encode"). */
  warnings: { index: number; message: string }[];
  bytes: number;
  /** Stopped by the cancel flag before its last file (writeParallel only): not all written. */
  cancelled?: boolean;
}

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

/** A chunk's result as writeParallel hands it over, or why the whole chunk failed. */
export type NativeChunkResult = NativeWriteResult | { failure: { code: string; message: string } };

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

export interface NativePathVerdict {
  index: number;
  rule: string;
  text: string;
}

export interface NativeOdb {
  read(oid: Buffer): { type: 'commit' | 'tree' | 'blob' | 'tag'; data: Buffer };
  /** `protect`: 1 core.protectNTFS | 2 core.protectHFS (see plan/paths.ts). */
  /**
   * With `keep`, the walk is kept until releaseCache; later walks copy the subtrees it shares,
   * and those lendIndex lent.
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
  resolvePrefix(hex: string): { count: number; oid?: Buffer };
  writeFiles(req: NativeWriteRequest): NativeWriteResult;
  writeFilesAsync(req: NativeWriteRequest): Promise<NativeWriteResult>;
  /** Frees the delta-base cache; the reader stays usable. */
  releaseCache(): void;
  close(): void;
}

/**
 * A worktree's root as a directory handle (see write/worktree.ts): paths are Buffers of their
 * exact bytes, relative; results are errno numbers (0 = done) rather than exceptions.
 */
export interface NativeWorktree {
  mkdir(path: Buffer): number;
  /** NUL-terminated paths, made on up to `threads` native threads: one errno each. */
  mkdirMany(paths: Buffer, threads: number): Int32Array;
  /** NUL-terminated paths, parents first, in order: made, or already a real directory (0). */
  ensureDirs(paths: Buffer): Int32Array;
  unlink(path: Buffer): number;
  rmdir(path: Buffer): number;
  removeTree(path: Buffer): number;
  symlink(target: Buffer, path: Buffer): number;
  /** Fills `out` (statWords words) when it returns 0. */
  lstat(path: Buffer, out: Uint32Array): number;
  readlink(path: Buffer): Buffer | number;
  /** Per NUL-terminated path: 1 when it is a regular file whose blob id is the given one. */
  sameBlobs(paths: Buffer, oids: Buffer, threads: number): Uint8Array;
  list(path: Buffer): { names: Buffer; dirs: Uint8Array } | number;
  /** A descriptor (the caller closes it) or -errno. */
  open(path: Buffer, how: 'read' | 'create', perm: number): number;
  close(): void;
}

/** A sorted path list as the native join reads it: path k is paths[starts[k], starts[k+1] - 1). */
/**
 * The union of the paths of the current index (I), the tree HEAD points at (H) and the target
 * tree (M), in index order: one row per path with the position of the path in each list (-1
 * where it is absent). Unmerged index entries (stages 1–3) collapse into one row.
 */
export interface NativeRows {
  count: number;
  i: Int32Array;
  h: Int32Array;
  m: Int32Array;
  /** 1 where the index has the path only as unmerged stages. */
  unmerged: Uint8Array;
  /** Per row, layout.sameEntry bits: which of its entries have the same mode and id. */
  same: Uint8Array;
}

export interface NativePathList {
  paths: Buffer;
  starts: Uint32Array;
  count: number;
  oids: Buffer;
  modes: Uint32Array;
}

/**
 * One inotify instance watching directories of worktrees (see plan/watch.ts): directories are
 * Buffers of their exact bytes, relative to their worktree's root ("" the root itself), opened
 * beneath it without following a link.
 */
export interface NativeWatch {
  /** A watch descriptor, or -errno (ENOSPC: the user's watch limit). */
  add(root: string, dir: Buffer): number;
  /** Closes the handle kept on a worktree's root. */
  forgetRoot(root: string): void;
  remove(wd: number): void;
  /** Every event queued so far; `complete` false when the kernel's queue overflowed. */
  drain(): { complete: boolean; wds: Int32Array; masks: Uint32Array; names: Buffer };
  close(): void;
}

export interface Addon {
  /** A reader with a new delta-base cache of cacheBytes, or sharing another reader's cache. */
  Odb: new (objectDirs: string[], cacheBytes: number | NativeOdb) => NativeOdb;
  Worktree: new (root: string) => NativeWorktree;
  Watch: new () => NativeWatch;
  /**
   * The planner's join of the index, HEAD's tree and the target tree (see plan/rows.ts): one
   * row per path, its position in each list or -1; an index path's stages form one row.
   */
  joinRows(
    index: NativePathList | null,
    stages: Uint8Array | null,
    head: NativePathList | null,
    target: NativePathList | null,
  ): NativeRows;
  /**
   * The planner's result: entry k is entry idx[k] of the index (src 0) or the target (src 1);
   * null when that is one of the lists whole and in order.
   */
  gatherEntries(
    index: NativePathList | null,
    target: NativePathList | null,
    src: Uint8Array,
    idx: Int32Array,
  ): NativePathList | null;
  /**
   * The stat data of that result, STAT_WORDS a position: none for entries from the target or
   * written; the probe's fresh words (`fresh`, by slot) where freshSlot >= 0; else the old
   * index's, the size zeroed where smudge is 1.
   */
  gatherStats(
    result: {
      src: Uint8Array;
      idx: Int32Array;
      write: Uint8Array;
      freshSlot: Int32Array;
      smudge: Uint8Array;
    },
    old: Uint32Array,
    fresh: Uint32Array,
  ): Uint32Array;
  /**
   * The directories of a list's entries (those with select[k] 1; null: all) and all their
   * ancestors, each once, parents first: NUL-terminated names.
   */
  dirsOf(list: NativePathList, select: Uint8Array | null): Buffer;
  /**
   * The rows a switch decides one by one: all but those whose index entry is merged, the same
   * as HEAD's and the target's, and not racy (mtime seconds below racySeconds; 0: none racy).
   */
  rowsToDecide(
    rows: Pick<NativeRows, 'i' | 'unmerged' | 'same'>,
    stats: Uint32Array,
    racySeconds: number,
  ): Int32Array;
  /**
   * An index file's bytes for `list` (entries at stage 0, `stats` STAT_WORDS each, the mode
   * recorded being the list's), then the extensions, then 20 zero bytes for the checksum.
   * Versions 3 and 4 write the extended flags of entries that have any.
   */
  serializeIndex(
    list: NativePathList,
    stats: Uint32Array,
    extFlags: Uint16Array | null,
    version: 2 | 3 | 4,
    extensions: Buffer[],
  ): Buffer;
  /**
   * The TREE extension (signature, size, data) of a walk's directories, each valid but those
   * above the NUL-terminated paths of `differing`.
   */
  cacheTreeExtension(dirs: NativeTreeDirs, differing: Buffer): Buffer;
  /** inotify's event bits, as the kernel headers the addon was built with define them. */
  watchFlags: { isDir: number; ignored: number; deleteSelf: number; moveSelf: number };
  statFiles(req: NativeStatRequest): NativeStatResult;
  /**
   * Writes the chunks on one native thread per reader (each reader used by one thread only,
   * marked busy until the promise settles). `onChunk` gets each chunk's result as it finishes,
   * all before the promise settles; a nonzero `cancel[0]` (Atomics.store) or a throw from
   * `onChunk` stops every thread before its next file (a throw rejects the promise).
   */
  writeParallel(
    readers: NativeOdb[],
    chunks: NativeWriteRequest[],
    cancel: Int32Array,
    onChunk: (chunk: number, result: NativeChunkResult) => void,
  ): Promise<void>;
  /**
   * What the readers decoded since they were last asked, added together; each reader then
   * starts a new record. Bases are told apart by pack file and offset across readers.
   */
  decodeStats(readers: NativeOdb[]): NativeDecodeStats;
  /** The whole file as a read-only mapping (never write to `data`), or null when it is absent. */
  mapFile(path: string): { data: Buffer; mtimeSec: number; mtimeNsec: number } | null;
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
  /** A blob's bytes as git checks them out with `conversion` (ident, eol, encoding). */
  convertToWorktree(
    data: Buffer,
    conversion: NativeConversion,
    oid: Buffer,
    path: string,
  ): NativeConverted;
  /** A file's bytes as git hashes them with `conversion` (encoding, eol, ident). */
  convertToGit(
    data: Buffer,
    conversion: NativeConversion,
    indexHasCrlf: boolean,
    path: string,
  ): NativeConverted;
  /** Whether a blob is text with CRLFs (git then leaves text=auto files' CRLFs alone). */
  blobHasCrlf(data: Buffer): boolean;
  /** Every error code native code can report; each must be in src/errors.ts's table. */
  errorCodes: string[];
  /** The layouts and constants both sides use (checked against EXPECTED_LAYOUT at load). */
  layout: typeof EXPECTED_LAYOUT;
}

/** Stat words per entry, in index-entry order (see native/write/writer.h). */
export const STAT_WORDS = 10;

/**
 * What TypeScript assumes about the addon's data: the stat words (index-entry order), the
 * per-file and per-path statuses, verdicts, write flags, sync modes and path-protection bits.
 * The addon exports its own; loadAddon() refuses one that differs (built from other sources).
 */
export const EXPECTED_LAYOUT = {
  statWords: STAT_WORDS,
  statFields: [
    'ctimeSec',
    'ctimeNsec',
    'mtimeSec',
    'mtimeNsec',
    'dev',
    'ino',
    'mode',
    'uid',
    'gid',
    'size',
  ],
  fileStatus: { written: 0, collided: 1, failed: 2 },
  statStatus: { present: 0, absent: 1, failed: 2 },
  // none 0 and clean 1: the probe takes a copy of the verdicts as its clean flags (probe.ts).
  verdict: { none: 0, clean: 1, dirty: 2, hash: 3 },
  writeFlags: { replace: 1 },
  sync: { none: 0, file: 1, start: 2 },
  protect: { ntfs: 1, hfs: 2 },
  sameEntry: { indexTarget: 1, indexHead: 2, headTarget: 4 },
};

export const FILE_COLLIDED = EXPECTED_LAYOUT.fileStatus.collided;
export const FILE_FAILED = EXPECTED_LAYOUT.fileStatus.failed;
export const WRITE_REPLACE = EXPECTED_LAYOUT.writeFlags.replace;
export const STAT_PRESENT = EXPECTED_LAYOUT.statStatus.present;
export const STAT_ABSENT = EXPECTED_LAYOUT.statStatus.absent;
export const STAT_FAILED = EXPECTED_LAYOUT.statStatus.failed;
export const VERDICT_CLEAN = EXPECTED_LAYOUT.verdict.clean;
export const VERDICT_DIRTY = EXPECTED_LAYOUT.verdict.dirty;
export const VERDICT_HASH = EXPECTED_LAYOUT.verdict.hash;

/**
 * Refuses an addon built from other sources than this JavaScript: a code missing from the
 * table would reach callers uncoded, a layout that differs would be misread silently.
 */
export function checkAddon(addon: Addon, where: string): void {
  const problems: string[] = [];
  const codes: unknown = addon.errorCodes;
  if (!Array.isArray(codes)) problems.push('it does not list its error codes');
  else {
    const unknown = codes.filter((c) => !isErrorCode(c));
    if (unknown.length > 0) problems.push(`error codes not in the table: ${unknown.join(', ')}`);
  }
  if (!isDeepStrictEqual(addon.layout, EXPECTED_LAYOUT)) {
    problems.push(
      `its layout ${JSON.stringify(addon.layout)} differs from ${JSON.stringify(EXPECTED_LAYOUT)}`,
    );
  }
  if (problems.length > 0) {
    throw new PcheckoutError(
      'ERR_ADDON_LOAD',
      `the native addon at ${where} does not match this version of pcheckout (${problems.join('; ')}); rebuild it: npm rebuild pcheckout`,
    );
  }
}

let cached: Addon | undefined;
let loadMs: number | null = null;

/** How long loading the addon took in this process (dlopen and checks), or null if not yet. */
export function addonLoadMs(): number | null {
  return loadMs;
}

/** Why the dynamic loader refused an addon file, in words that say what to do. */
export function explainLoadError(err: unknown): string {
  const message = String((err as Error)?.message ?? err);
  const version = /NODE_MODULE_VERSION (\d+)/.exec(message);
  if (version) {
    return `it was built for another Node.js (NODE_MODULE_VERSION ${version[1]}; Node.js ${process.version} needs ${process.versions.modules}): rebuild it with this Node.js`;
  }
  const library = /([^\s:]+): cannot open shared object file/.exec(message);
  if (library) {
    const hint = library[1]!.startsWith('libdeflate')
      ? ' (Debian: apt-get install libdeflate0)'
      : '';
    return `a shared library it needs is missing: ${library[1]}${hint}; install it, or rebuild the addon on this machine`;
  }
  if (
    /invalid ELF header|wrong ELF class|ELFCLASS|Exec format error|file too short/.test(message)
  ) {
    return `it is not a Linux ${process.arch} binary (built for another platform or architecture): rebuild it on this machine`;
  }
  const symbol = /undefined symbol: (\S+)/.exec(message);
  if (symbol) {
    return `it needs ${symbol[1]}, which this Node.js or a library does not provide (built elsewhere?): rebuild it on this machine`;
  }
  return message.split('\n')[0]!;
}

/**
 * Loads the addon once per thread, and checks that it matches this JavaScript. If it cannot,
 * says what was tried, why each failed, and how to fix it. PCHECKOUT_ADDON names the one file
 * to load (no fallback: a sanitizer run must not silently test another build).
 */
export function loadAddon(): Addon {
  if (cached) return cached;
  const started = performance.now();
  if (process.platform !== 'linux') {
    throw new PcheckoutError(
      'ERR_ADDON_LOAD',
      `pcheckout runs on Linux only (this is ${process.platform}); its native addon uses Linux system calls (openat2, syncfs)`,
    );
  }
  const require = createRequire(import.meta.url);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const chosen = process.env['PCHECKOUT_ADDON'];
  const candidates =
    chosen !== undefined && chosen !== ''
      ? [chosen]
      : [
          join(root, 'build', 'Release', 'pcheckout.node'),
          join(root, 'build', 'Debug', 'pcheckout.node'),
        ];
  const failures: string[] = [];
  let missing = 0;
  for (const candidate of candidates) {
    if (!existsSync(candidate)) {
      failures.push(`${candidate}: not found`);
      missing++;
      continue;
    }
    let loaded: Addon;
    try {
      loaded = require(candidate) as Addon;
    } catch (err) {
      failures.push(`${candidate}: ${explainLoadError(err)}`);
      continue;
    }
    checkAddon(loaded, candidate);
    cached = loaded;
    loadMs = Math.round((performance.now() - started) * 10) / 10;
    return cached;
  }
  const advice =
    missing === candidates.length
      ? [
          'It was never built: install a C++ compiler, make, python3 and the zlib headers',
          '(Debian: apt-get install g++ make python3 zlib1g-dev libdeflate-dev), then run',
          `"npm rebuild pcheckout" (or "npx node-gyp rebuild" in ${root}).`,
        ]
      : [`To rebuild it: "npm rebuild pcheckout" (or "npx node-gyp rebuild" in ${root}).`];
  throw new PcheckoutError(
    'ERR_ADDON_LOAD',
    [
      'pcheckout could not load its native addon. Tried:',
      ...failures.map((f) => `  - ${f}`),
      ...advice,
    ].join('\n'),
  );
}
