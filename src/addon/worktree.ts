/**
 * The addon's worktree operations (native/binding/worktree.cc over native/worktree/): a handle
 * on a worktree's root, and the probe's batch of lstats.
 */

/** lstat of many paths under a root, never through a symlinked leading directory. */
export interface NativeStatRequest {
  root: string;
  /** NUL-terminated relative paths, concatenated. */
  paths: Buffer;
  /** Native threads to spread the lstats over (1–1024; fewer for few paths). */
  threads?: number;
  /** At least this many paths for each thread (default 2,048; a network filesystem: fewer). */
  perThread?: number;
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

/**
 * A worktree's root as a directory handle (see src/worktree.ts): paths are Buffers of their
 * exact bytes, relative; results are errno numbers (0 = done) rather than exceptions.
 */
export interface NativeWorktree {
  mkdir(path: Buffer): number;
  /** NUL-terminated paths, made on up to `threads` native threads: one errno each. */
  mkdirMany(paths: Buffer, threads: number): Int32Array;
  /** unlink of each NUL-terminated path on up to `threads` threads: 0 or an errno per path. */
  unlinkMany(paths: Buffer, threads: number): Int32Array;
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

export interface WorktreeExports {
  Worktree: new (root: string) => NativeWorktree;
  statFiles(req: NativeStatRequest): NativeStatResult;
}
