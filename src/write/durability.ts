/**
 * Durability of the worktree: what each file gets in the writer (nothing, an fsync before close,
 * or a start of writeback), and the barrier after all writes and removals, before the index is
 * committed. git never fsyncs worktree files; this is pcheckout's own `pcheckout.fsync`.
 *
 * - `none`: nothing (the kernel writes back when it likes).
 * - `file`: each file fsynced before close; then every directory whose entries changed (files
 *   created, removed, directories made or removed) is fsynced.
 * - `batch`: each file's writeback started (sync_file_range WRITE) as it is closed, so the
 *   disk works while the writers go on; then one barrier: on a local kernel filesystem syncfs(2)
 *   of the worktree's filesystem (it waits for all of its data and commits its journal, which
 *   holds the new names); on FUSE and network filesystems, where syncfs may not reach the
 *   server, a second pass of fsyncs of every file written and every directory changed, on native
 *   threads (the data is already on its way, so each fsync mostly waits for a reply).
 */
import { EXPECTED_LAYOUT, type Addon } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import type { Plan } from '../plan/plan.js';
import type { FilesystemInfo } from './filesystem.js';
import { pathList } from '../worktree.js';

export type FsyncMode = 'none' | 'file' | 'batch';
/** How the barrier completed: nothing to do, syncfs(2), or fsyncs of paths. */
export type Barrier = 'none' | 'syncfs' | 'fsync';

export interface FsyncSummary {
  mode: FsyncMode;
  barrier: Barrier;
  /** Paths fsynced by the barrier (directories; files too for a `batch` fsync pass). */
  synced: number;
  barrierMs: number;
}

/** The writer's per-file step (native SyncMode; the values are checked when the addon loads). */
export const SYNC_NONE = EXPECTED_LAYOUT.sync.none;
export const SYNC_FILE = EXPECTED_LAYOUT.sync.file;
export const SYNC_START = EXPECTED_LAYOUT.sync.start;

export function writerSync(mode: FsyncMode): number {
  return mode === 'file' ? SYNC_FILE : mode === 'batch' ? SYNC_START : SYNC_NONE;
}

/** The barrier a mode needs on a filesystem. */
export function barrierFor(mode: FsyncMode, fs: FilesystemInfo): Barrier {
  if (mode === 'none') return 'none';
  if (mode === 'file') return 'fsync';
  // syncfs is complete only where the kernel owns the whole filesystem.
  return fs.network || fs.type.startsWith('fuse') || fs.type === 'unknown' ? 'fsync' : 'syncfs';
}

const parent = (name: string): string => {
  const slash = name.lastIndexOf('/');
  return slash < 0 ? '.' : name.slice(0, slash);
};

/**
 * Directories whose entries the plan changes: the parents of every entry written, removed or
 * cleared, of every directory made or removed, and the directories made (they hold new names).
 * Latin1 names, as EntryList.name gives them.
 */
export function changedDirs(plan: Plan): string[] {
  const dirs = new Set<string>();
  const { result } = plan;
  for (const f of plan.files) dirs.add(parent(result.name(f.index)));
  for (const k of plan.symlinks) dirs.add(parent(result.name(k)));
  for (const k of plan.gitlinks) dirs.add(parent(result.name(k)));
  for (const { path } of plan.deletes) dirs.add(parent(path));
  for (const path of plan.rmdirs) dirs.add(parent(path));
  for (const path of plan.clears) dirs.add(parent(path));
  for (const dir of plan.dirs) {
    dirs.add(dir);
    dirs.add(parent(dir));
  }
  return [...dirs];
}

const GONE = new Set([2 /* ENOENT */, 20 /* ENOTDIR */]);

function fsyncAll(addon: Addon, root: string, names: string[], threads: number): void {
  if (names.length === 0) return;
  const errors = addon.fsyncPaths({ root, paths: pathList(names), threads });
  for (let i = 0; i < errors.length; i++) {
    // A removed directory's own entry is gone with it; its parent is in the list.
    if (errors[i] !== 0 && !GONE.has(errors[i]!)) {
      const display = Buffer.from(names[i]!, 'latin1').toString('utf8');
      throw new PcheckoutError('ERR_IO', `fsync ${display} failed (errno ${errors[i]})`, {
        path: display,
      });
    }
  }
}

export interface BarrierSettings {
  root: string;
  mode: FsyncMode;
  fs: FilesystemInfo;
  threads: number;
  /** core.symlinks=false: symlinks were written as plain files on the main thread. */
  symlinksAsFiles: boolean;
}

/** Completes durability of everything the plan wrote and removed. */
export function syncBarrier(addon: Addon, plan: Plan, settings: BarrierSettings): FsyncSummary {
  const started = performance.now();
  const barrier = barrierFor(settings.mode, settings.fs);
  const { result } = plan;
  let synced = 0;
  if (barrier === 'syncfs') {
    try {
      addon.syncFilesystem(settings.root);
    } catch (err) {
      throw new PcheckoutError('ERR_IO', `syncfs of ${settings.root} failed: ${String(err)}`, {
        cause: err,
      });
    }
  } else if (barrier === 'fsync') {
    // Files first (in `file` mode the writers did them, but not links written as files), then
    // the directories that hold their names.
    const files: string[] = [];
    if (settings.mode === 'batch') for (const f of plan.files) files.push(result.name(f.index));
    if (settings.symlinksAsFiles) for (const k of plan.symlinks) files.push(result.name(k));
    const dirs = changedDirs(plan);
    fsyncAll(addon, settings.root, files, settings.threads);
    fsyncAll(addon, settings.root, dirs, settings.threads);
    synced = files.length + dirs.length;
  }
  return {
    mode: settings.mode,
    barrier,
    synced,
    barrierMs: Math.round((performance.now() - started) * 10) / 10,
  };
}
