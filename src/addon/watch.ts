/** The addon's worktree watch (native/binding/watch.cc over native/worktree/watch.cc). */

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

export interface WatchExports {
  Watch: new () => NativeWatch;
  /** inotify's event bits, as the kernel headers the addon was built with define them. */
  watchFlags: { isDir: number; ignored: number; deleteSelf: number; moveSelf: number };
}
