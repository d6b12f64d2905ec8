/**
 * The executor: carries out a Plan in git's order — removals first (files, then the
 * directories they leave empty), then whatever is in the way, directories, regular files (in
 * process or on the pool), and symlinks and gitlinks last, on this thread, so that no link
 * made during the writes can redirect one.
 */
import { FILE_COLLIDED, FILE_FAILED, type NativeOdb } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import { STAT_WORDS } from '../index/write.js';
import { readObject } from '../repo/objects.js';
import { killPoint } from '../kill-point.js';
import type { Plan } from '../plan/plan.js';
import { writeFiles, type PoolStarter, type Progress, type WriteOutcome } from './write.js';
import type { WorktreeDir } from '../worktree.js';

export interface ExecuteSettings {
  root: string;
  /** The same root as a directory handle: every path operation goes through it. */
  worktree: WorktreeDir;
  /** Starts the pool when the files go to it; null writes them in process. */
  pool: PoolStarter | null;
  streamThreshold: number;
  /** The writer's per-file sync step (write/durability.ts). */
  sync: number;
  /**
   * Make the directories of each depth concurrently (a network filesystem, where each mkdir
   * waits for the server), on dirThreads native threads; else one by one, which is cheaper on
   * a local disk.
   */
  concurrentDirs?: boolean;
  dirThreads: number;
  /** core.symlinks: false writes a link's target as a plain file. */
  symlinks: boolean;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
}

export interface ExecuteOutcome extends WriteOutcome {
  /** Paths that collided with another entry (case-insensitive filesystems), sorted. */
  collisions: string[];
}

// Nothing of ours there: gone, or a leading component is a file or a link (never followed).
const ENOENT_LIKE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const isDir = (mode: number | string): boolean =>
  typeof mode === 'number' && (mode & S_IFMT) === S_IFDIR;

function removeOld(wt: WorktreeDir, plan: Plan): void {
  for (const { path, dir } of plan.deletes) {
    const code = dir ? wt.rmdir(path) : wt.unlink(path);
    if (code === null) continue;
    // A submodule directory that is not empty stays, as with git.
    if (dir && (code === 'ENOTEMPTY' || code === 'EEXIST')) continue;
    if (!ENOENT_LIKE.has(code)) throw wt.error(code, 'remove', path);
  }
  for (const dir of plan.rmdirs) {
    wt.rmdir(dir); // not empty (untracked or ignored files stay), or already gone
  }
  for (const path of plan.clears) {
    const code = wt.removeTree(path);
    if (code !== null) throw wt.error(code, 'remove', path);
  }
}

/**
 * Makes the directories, parents first. One that exists must be a real directory: a file or
 * symlink in its place (or in place of one of its parents) is replaced when the plan allows
 * it, else the checkout stops here.
 */
function makeDirs(wt: WorktreeDir, plan: Plan, dirs: readonly string[], gitlinks: number[]): void {
  const make = (rel: string, again = false): void => {
    const code = wt.mkdir(rel);
    if (code === null) return;
    if ((code === 'ELOOP' || code === 'ENOTDIR') && !again) {
      // A leading component is a symlink or a file: make it a real directory first.
      const slash = rel.lastIndexOf('/');
      if (slash > 0) {
        make(rel.slice(0, slash));
        make(rel, true);
        return;
      }
    }
    if (code !== 'EEXIST') throw wt.error(code, 'create directory', rel);
    if (isDir(wt.lstatMode(rel))) return;
    if (!plan.replaceInTheWay) {
      throw new PcheckoutError(
        'ERR_WOULD_OVERWRITE',
        `cannot create directory ${display(rel)}: a file or symlink is in the way`,
        { path: display(rel), paths: [display(rel)] },
      );
    }
    const replaced = wt.unlink(rel) ?? wt.mkdir(rel);
    if (replaced !== null) throw wt.error(replaced, 'create directory', rel);
  };
  for (const dir of dirs) make(dir);
  for (const k of gitlinks) make(plan.result.name(k));
}

/**
 * The directories of each depth at once on native threads (their round trips overlap on a
 * network filesystem), parents' depth first; any that was not simply created (something
 * there) goes through makeDirs' checks.
 */
function makeDirsConcurrently(wt: WorktreeDir, plan: Plan, threads: number): void {
  const byDepth: string[][] = [];
  for (const dir of plan.dirs) {
    let depth = 0;
    for (let i = dir.indexOf('/'); i >= 0; i = dir.indexOf('/', i + 1)) depth++;
    (byDepth[depth] ??= []).push(dir);
  }
  for (const level of byDepth) {
    if (!level) continue;
    const results = wt.mkdirMany(level, threads);
    // Whatever failed is retried with the checks (in order, parents first) before going deeper.
    const rest = level.filter((_, i) => results[i] !== null);
    if (rest.length > 0) makeDirs(wt, plan, rest, []);
  }
  makeDirs(wt, plan, [], plan.gitlinks);
}

function statInto(wt: WorktreeDir, stats: Uint32Array, k: number, rel: string): void {
  const code = wt.lstatInto(rel, stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS));
  if (code !== null) throw wt.error(code, 'stat', rel);
}

/** Symlinks go last and on this thread: a link made while workers write could redirect them. */
function writeLinks(
  odb: NativeOdb,
  plan: Plan,
  outcome: WriteOutcome,
  settings: ExecuteSettings,
): void {
  const { result } = plan;
  const wt = settings.worktree;
  for (const k of plan.symlinks) {
    const blob = readObject(odb, result.oidHex(k));
    if (blob.type !== 'blob') {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `symlink ${result.display(k)} points at a ${blob.type}`,
        { oid: result.oidHex(k), path: result.display(k) },
      );
    }
    const rel = result.name(k);
    let code = plan.replace[k] === 1 ? wt.unlink(rel) : null;
    if (code !== null && ENOENT_LIKE.has(code)) code = null;
    if (code === null) {
      code = settings.symlinks ? wt.symlink(blob.data, rel) : wt.writeNew(rel, blob.data, 0o666);
    }
    if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ELOOP') {
      outcome.collided.push(k);
      continue;
    }
    if (code !== null) throw wt.error(code, 'create symlink', rel);
    statInto(wt, outcome.stats, k, rel);
  }
  for (const k of plan.gitlinks) statInto(wt, outcome.stats, k, result.name(k));
}

/**
 * Entries whose path was taken when written: two names one filesystem treats as the same, or
 * (forced) a directory in the way. Written again one by one, last one wins, as git does.
 * Returns every path of each colliding group.
 */
function retryCollisions(
  odb: NativeOdb,
  plan: Plan,
  outcome: WriteOutcome,
  settings: ExecuteSettings,
): string[] {
  if (outcome.collided.length === 0) return [];
  const { result } = plan;
  const wt = settings.worktree;
  const sizes = new Map(plan.files.map((f) => [f.index, f.size]));
  const groups: number[] = [];
  for (const k of outcome.collided) {
    if (result.modes[k] === 0o120000 || result.modes[k] === 0o160000) {
      groups.push(k);
      continue;
    }
    const rel = result.name(k);
    // Never through a link: a leading component that is not a real directory (a symlink
    // made since, on a case-insensitive filesystem) fails the lstat and leaves it collided.
    const mode = wt.lstatMode(rel);
    const wasDir = isDir(mode);
    if (typeof mode === 'number') {
      if (!wasDir) wt.unlink(rel);
      else if (plan.replaceInTheWay) wt.removeTree(rel);
    }
    const res = odb.writeFiles({
      root: settings.root,
      paths: Buffer.concat([result.pathBytes(k), Buffer.alloc(1)]),
      oids: Buffer.from(result.oid(k)),
      modes: Uint32Array.of(result.modes[k]!),
      sizes: Float64Array.of(sizes.get(k) ?? 0),
      streamThreshold: settings.streamThreshold,
      sync: settings.sync,
    });
    if (res.status[0] === FILE_FAILED) {
      outcome.failures.push({
        index: k,
        code: res.errors[0]!.code,
        message: res.errors[0]!.message,
      });
    } else if (res.status[0] !== FILE_COLLIDED) {
      outcome.stats.set(res.stats, k * STAT_WORDS);
      outcome.bytes += res.bytes;
      if (wasDir && plan.replaceInTheWay) continue; // a directory in the way, not a collision
    }
    groups.push(k);
  }
  if (groups.length === 0) return [];
  // Report each group whole: the collided entries and the ones whose names fold to theirs.
  const folded = new Set(groups.map((k) => result.display(k).toLowerCase()));
  const names = new Set<string>();
  for (let k = 0; k < result.count; k++) {
    if (folded.has(result.display(k).toLowerCase())) names.add(result.display(k));
  }
  for (const k of groups) names.add(result.display(k));
  return [...names].sort();
}

export async function execute(
  odb: NativeOdb,
  plan: Plan,
  settings: ExecuteSettings,
): Promise<ExecuteOutcome> {
  removeOld(settings.worktree, plan);
  killPoint();
  if (settings.concurrentDirs) makeDirsConcurrently(settings.worktree, plan, settings.dirThreads);
  else makeDirs(settings.worktree, plan, plan.dirs, plan.gitlinks);
  killPoint();
  const outcome = await writeFiles(plan.result, plan.files, plan.replace, odb, {
    root: settings.root,
    pool: settings.pool,
    streamThreshold: settings.streamThreshold,
    sync: settings.sync,
    onProgress: settings.onProgress,
    signal: settings.signal,
  });
  if (settings.signal?.aborted) return { ...outcome, collisions: [] };
  writeLinks(odb, plan, outcome, settings);
  killPoint();
  const collisions = retryCollisions(odb, plan, outcome, settings);
  return { ...outcome, collisions };
}
