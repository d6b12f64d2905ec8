/**
 * What may outlive one checkout: the object readers, one per writing thread. A one-shot
 * checkout opens them and closes them when it ends; a warm engine (engine.ts) keeps them
 * across calls, so a build system that checks out many trees maps packs once.
 */
import { statSync } from 'node:fs';
import { WatchHub, WorktreeWatch } from './plan/watch.js';
import type { FilesystemInfo } from './write/filesystem.js';
import { loadAddon, type NativeOdb } from './addon.js';
import { fromNative } from './errors.js';

/**
 * Delta bases cached for all the readers of a store together: one cache they share, so a
 * base one thread decoded serves the others and the memory does not grow with the threads.
 */
export const CACHE_BUDGET = 64 * 1024 * 1024;
/**
 * The free memory the threads' arenas may keep between calls. glibc's trim walks every arena
 * under its lock, the host's main one too, so each trim stalls the host's thread for as long as
 * the host's own free memory takes (83 ms measured after a bench's setup); small calls leave
 * less than this, and skipping their trim keeps the host's loop free (bench/host.mjs).
 */
export const TRIM_WORTHWHILE = 32 * 1024 * 1024;
/** Worktrees a warm engine watches at once (least recently used first out). */
const MAX_WATCHED = 8;
/**
 * Filesystems whose changes inotify sees, whoever makes them: local kernel ones. Not FUSE (the
 * daemon's own changes are not reported) nor network ones (other clients' are not).
 */
const WATCHABLE = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'tmpfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'bcachefs',
]);

/** A repository's objects as this process reads them. */
export interface Store {
  objectDirs: string[];
  /** The planning reader; also the first writer. */
  odb: NativeOdb;
  /**
   * `threads` readers for the writers (the planning one first), sharing one delta-base
   * cache; made on first use and kept while the packs stay the same.
   */
  readers(threads: number): NativeOdb[];
  /** Every reader opened so far (the planning one first). */
  opened(): NativeOdb[];
}

/** A reader with the store's cache: a new one for the first reader, else the first's. */
function openReader(objectDirs: string[], first: NativeOdb | null): NativeOdb {
  try {
    return new (loadAddon().Odb)(objectDirs, first ?? CACHE_BUDGET);
  } catch (err) {
    throw fromNative(err, 'cannot open the object database');
  }
}

/** Where packs live: a repack changes these directories, and then the readers are renewed. */
function packSignature(objectDirs: string[]): string {
  return objectDirs
    .map((dir) => {
      const st = statSync(`${dir}/pack`, { bigint: true, throwIfNoEntry: false });
      return st ? `${dir}:${st.ino}:${st.mtimeNs}` : `${dir}:-`;
    })
    .join('\0');
}

export class Resources {
  private readonly stores = new Map<
    string,
    { store: Store; all: NativeOdb[]; signature: string }
  >();
  private readonly watches = new Map<string, { root: string; watch: WorktreeWatch }>();
  private hub: WatchHub | null = null;
  private spent: ArrayBufferView[] = [];
  private closed = false;

  /** `watch`: keep a watch of each worktree between calls (a warm engine; see plan/watch.ts). */
  constructor(private readonly options: { watch?: boolean } = {}) {}

  /**
   * The watch of a worktree, made on first use; null for a one-shot checkout, when turned off,
   * and on filesystems whose changes inotify may not see. A worktree replaced by another
   * directory at the same path gets a new watch.
   */
  watch(worktree: string, fs: FilesystemInfo): WorktreeWatch | null {
    if (this.options.watch !== true || !WATCHABLE.has(fs.type)) return null;
    const st = statSync(worktree, { bigint: true, throwIfNoEntry: false });
    if (!st) return null;
    const root = `${st.dev}:${st.ino}`;
    const known = this.watches.get(worktree);
    this.watches.delete(worktree); // re-inserted last: the map's order is least recent first
    if (known && known.root === root) {
      this.watches.set(worktree, known);
      return known.watch;
    }
    known?.watch.close();
    this.hub ??= new WatchHub(loadAddon());
    if (!this.hub.usable) return null;
    const watch = new WorktreeWatch(this.hub, worktree);
    this.watches.set(worktree, { root, watch });
    for (const [path, old] of this.watches) {
      if (this.watches.size <= MAX_WATCHED) break;
      old.watch.close();
      this.watches.delete(path);
    }
    return watch;
  }

  /** The reader of a repository's objects, reopened when its packs changed since last time. */
  store(objectDirs: string[]): Store {
    const key = objectDirs.join('\0');
    const signature = packSignature(objectDirs);
    const known = this.stores.get(key);
    if (known && known.signature === signature) return known.store;
    if (known) for (const odb of known.all) odb.close();
    const all = [openReader(objectDirs, null)];
    const store: Store = {
      objectDirs,
      odb: all[0]!,
      readers: (n) => {
        while (all.length < n) all.push(openReader(objectDirs, all[0]!));
        return all.slice(0, Math.max(n, 1));
      },
      opened: () => [...all],
    };
    this.stores.set(key, { store, all, signature });
    return store;
  }

  /**
   * The big arrays of a call that has answered (the index read, the walks, the plan's result,
   * the stat data written): given back with the caches, after the answer. Left to the garbage
   * collector, a million-entry call's ~250 MB of them stayed resident until the next call's
   * first collection, and counted at its peak.
   */
  spend(views: readonly ArrayBufferView[]): void {
    this.spent.push(...views);
  }

  private releaseSpent(): void {
    if (this.spent.length === 0) return;
    const views = this.spent;
    this.spent = [];
    loadAddon().releaseArrays(views);
  }

  /**
   * Between checkouts: caches are dropped, readers stay, and the heap's free memory goes back
   * to the system once the threads' arenas hold TRIM_WORTHWHILE of it (they would otherwise
   * keep their peak).
   */
  idle(): void {
    this.releaseSpent();
    for (const { all } of this.stores.values()) for (const odb of all) odb.releaseCache();
    if (this.stores.size > 0) loadAddon().releaseMemory(TRIM_WORTHWHILE);
  }

  /**
   * The readers closed and the free memory returned: all of it (`trim: 'all'`, an engine's
   * close), or once it is worth the trim (the end of a one-shot call).
   */
  close(trim: 'all' | 'worthwhile' = 'all'): void {
    if (this.closed) return;
    this.closed = true;
    this.releaseSpent();
    const used = this.stores.size > 0 || this.hub !== null;
    for (const { all } of this.stores.values()) for (const odb of all) odb.close();
    this.stores.clear();
    for (const { watch } of this.watches.values()) watch.close();
    this.watches.clear();
    this.hub?.close();
    this.hub = null;
    if (used) loadAddon().releaseMemory(trim === 'all' ? undefined : TRIM_WORTHWHILE);
  }
}
