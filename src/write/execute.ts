/**
 * The executor: carries out a Plan in git's order — removals first (files, then the
 * directories they leave empty), then whatever is in the way, directories, regular files (in
 * process or on the pool), and symlinks and gitlinks last, on this thread, so that no link
 * made during the writes can redirect one.
 */
import {
  lstatSync,
  mkdirSync,
  rmSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  type BigIntStats,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { FILE_COLLIDED, FILE_FAILED, type NativeOdb } from '../addon.js';
import { PcheckoutError, fromSystem } from '../errors.js';
import { STAT_WORDS } from '../index/write.js';
import { readObject } from '../repo/objects.js';
import type { FilterPartition } from '../plan/filter-attrs.js';
import type { FileTask } from '../plan/locate.js';
import type { Plan } from '../plan/plan.js';
import { FilterStep, type FilterStepSettings } from './filtered.js';
import { writeFiles, type Progress, type WriteOutcome } from './write.js';
import type { WorkerPool } from './pool.js';

export interface ExecuteSettings {
  root: string;
  pool: WorkerPool | null;
  streamThreshold: number;
  /** The writer's per-file sync step (write/durability.ts). */
  sync: number;
  /**
   * Make the directories of each depth concurrently (a network filesystem, where each mkdir
   * waits for the server); else one by one, which is cheaper on a local disk.
   */
  concurrentDirs?: boolean;
  /** core.symlinks: false writes a link's target as a plain file. */
  symlinks: boolean;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  /** The files that go through external filters (write/filtered.ts), or null when none do. */
  filters: (FilterPartition & { step: Omit<FilterStepSettings, 'root' | 'sync'> }) | null;
}

export interface ExecuteOutcome extends WriteOutcome {
  /** Paths that collided with another entry (case-insensitive filesystems), sorted. */
  collisions: string[];
  /** Regular files written through external filters, and how many of them were delayed. */
  filteredFiles: number;
  delayedFiles: number;
  /** Regular files written on the pool (0 when it was not used). */
  poolFiles: number;
}

const ENOENT_LIKE = new Set(['ENOENT', 'ENOTDIR']);

function abs(root: string, rel: string): Buffer {
  return Buffer.concat([Buffer.from(`${root}/`), Buffer.from(rel, 'latin1')]);
}

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

function removeOld(root: string, plan: Plan): void {
  for (const { path, dir } of plan.deletes) {
    try {
      if (dir) rmdirSync(abs(root, path));
      else unlinkSync(abs(root, path));
    } catch (err) {
      const code = errCode(err);
      // A submodule directory that is not empty stays, as with git.
      if (dir && (code === 'ENOTEMPTY' || code === 'EEXIST')) continue;
      if (!ENOENT_LIKE.has(code ?? '')) throw fromSystem(err, 'remove', display(path));
    }
  }
  for (const dir of plan.rmdirs) {
    try {
      rmdirSync(abs(root, dir));
    } catch {
      /* not empty (untracked or ignored files stay), or already gone */
    }
  }
  for (const path of plan.clears) {
    try {
      rmSync(abs(root, path), { recursive: true, force: true });
    } catch (err) {
      throw fromSystem(err, 'remove', display(path));
    }
  }
}

/**
 * Makes the directories, parents first. One that exists must be a real directory: a file or
 * symlink in its place is replaced when the plan allows it, else the checkout stops here.
 */
function makeDirs(root: string, plan: Plan): void {
  const make = (rel: string): void => {
    const path = abs(root, rel);
    try {
      mkdirSync(path);
      return;
    } catch (err) {
      if (errCode(err) !== 'EEXIST') throw fromSystem(err, 'create directory', display(rel));
    }
    // Parents were checked first, so this lstat cannot pass through a link.
    if (lstatSync(path).isDirectory()) return;
    if (!plan.replaceInTheWay) {
      throw new PcheckoutError(
        'ERR_WOULD_OVERWRITE',
        `cannot create directory ${display(rel)}: a file or symlink is in the way`,
        { path: display(rel), paths: [display(rel)] },
      );
    }
    try {
      unlinkSync(path);
      mkdirSync(path);
    } catch (err) {
      throw fromSystem(err, 'create directory', display(rel));
    }
  };
  for (const dir of plan.dirs) make(dir);
  for (const k of plan.gitlinks) make(plan.result.name(k));
}

/**
 * The directories of each depth at once (libuv's threads overlap the round trips), parents'
 * depth first; any that was not simply created (something there) goes through makeDirs' checks.
 */
async function makeDirsConcurrently(root: string, plan: Plan): Promise<void> {
  const byDepth: string[][] = [];
  for (const dir of plan.dirs) {
    let depth = 0;
    for (let i = dir.indexOf('/'); i >= 0; i = dir.indexOf('/', i + 1)) depth++;
    (byDepth[depth] ??= []).push(dir);
  }
  const rest: string[] = [];
  for (const level of byDepth) {
    if (!level) continue;
    const results = await Promise.allSettled(level.map((dir) => mkdir(abs(root, dir))));
    results.forEach((r, i) => {
      if (r.status === 'rejected') rest.push(level[i]!);
    });
    // Whatever failed is retried with the checks (in order, parents first) before going deeper.
    if (rest.length > 0) makeDirs(root, { ...plan, dirs: rest.splice(0), gitlinks: [] });
  }
  makeDirs(root, { ...plan, dirs: [] });
}

function putStat(stats: Uint32Array, i: number, st: BigIntStats): void {
  const w = (v: bigint): number => Number(v & 0xffffffffn);
  const base = i * STAT_WORDS;
  stats[base] = w(st.ctimeNs / 1_000_000_000n);
  stats[base + 1] = w(st.ctimeNs % 1_000_000_000n);
  stats[base + 2] = w(st.mtimeNs / 1_000_000_000n);
  stats[base + 3] = w(st.mtimeNs % 1_000_000_000n);
  stats[base + 4] = w(st.dev);
  stats[base + 5] = w(st.ino);
  stats[base + 6] = w(st.mode);
  stats[base + 7] = w(st.uid);
  stats[base + 8] = w(st.gid);
  stats[base + 9] = w(st.size);
}

/** Symlinks go last and on this thread: a link made while workers write could redirect them. */
function writeLinks(
  odb: NativeOdb,
  plan: Plan,
  outcome: WriteOutcome,
  settings: ExecuteSettings,
): void {
  const { result } = plan;
  for (const k of plan.symlinks) {
    const blob = readObject(odb, result.oidHex(k));
    if (blob.type !== 'blob') {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `symlink ${result.display(k)} points at a ${blob.type}`,
        { oid: result.oidHex(k), path: result.display(k) },
      );
    }
    const path = abs(settings.root, result.name(k));
    try {
      if (plan.replace[k] === 1) unlinkIfThere(path);
      if (settings.symlinks) symlinkSync(blob.data, path);
      else writeFileSync(path, blob.data, { flag: 'wx', mode: 0o666 });
    } catch (err) {
      const code = errCode(err);
      if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR') {
        outcome.collided.push(k);
        continue;
      }
      throw fromSystem(err, 'create symlink', result.display(k));
    }
    putStat(outcome.stats, k, lstatSync(path, { bigint: true }));
  }
  for (const k of plan.gitlinks) {
    putStat(outcome.stats, k, lstatSync(abs(settings.root, result.name(k)), { bigint: true }));
  }
}

function unlinkIfThere(path: Buffer): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if (!ENOENT_LIKE.has(errCode(err) ?? '')) throw err;
  }
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
  /** Collided entries already written again by their own step (filtered ones): reported only. */
  rewritten: number[],
): string[] {
  if (outcome.collided.length === 0 && rewritten.length === 0) return [];
  const { result } = plan;
  const sizes = new Map(plan.files.map((f) => [f.index, f.size]));
  const groups: number[] = [...rewritten];
  for (const k of outcome.collided) {
    if (result.modes[k] === 0o120000 || result.modes[k] === 0o160000) {
      groups.push(k);
      continue;
    }
    const path = abs(settings.root, result.name(k));
    let wasDir = false;
    try {
      // Never through a link: a leading component that is not a real directory (a symlink
      // made since, on a case-insensitive filesystem) leaves the entry collided.
      if (!realParents(settings.root, result.name(k))) throw new Error('not a real directory');
      const st = lstatSync(path);
      wasDir = st.isDirectory();
      if (!wasDir) unlinkSync(path);
      else if (plan.replaceInTheWay) rmSync(path, { recursive: true, force: true });
    } catch {
      /* nothing there (a leading component was in the way) */
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

/** Whether every leading component of `rel` (latin1) is a real directory, links not followed. */
function realParents(root: string, rel: string): boolean {
  for (let s = rel.indexOf('/'); s > 0; s = rel.indexOf('/', s + 1)) {
    if (!lstatSync(abs(root, rel.slice(0, s)), { throwIfNoEntry: false })?.isDirectory())
      return false;
  }
  return true;
}

export async function execute(
  odb: NativeOdb,
  plan: Plan,
  settings: ExecuteSettings,
): Promise<ExecuteOutcome> {
  removeOld(settings.root, plan);
  if (settings.concurrentDirs) await makeDirsConcurrently(settings.root, plan);
  else makeDirs(settings.root, plan);
  // Filtered files first, in index order, then the rest, then the delayed ones: git's order
  // (its sequential pass, the parallel queue, finish_delayed_checkout). A required filter that
  // fails stops the checkout before the other files are written, as it stops git's.
  const { filters, onProgress } = settings;
  const step =
    filters && filters.filtered.length > 0
      ? new FilterStep(odb, plan.result, filters.filtered, plan.replace, {
          ...filters.step,
          root: settings.root,
          sync: settings.sync,
        })
      : null;
  const total = plan.files.length;
  const written = { done: 0, bytes: 0 }; // by the pool or in process
  const report = (): void =>
    onProgress?.({
      done: written.done + (step?.done ?? 0),
      total,
      bytes: written.bytes + (step?.outcome.bytes ?? 0),
    });
  if (step) {
    await step.writeFirstPass(settings.signal);
    report();
  }
  const plain = filters ? filters.plain : plan.files;
  const outcome = await writeFiles(plan.result, plain, plan.replace, odb, {
    root: settings.root,
    pool: settings.pool,
    streamThreshold: settings.streamThreshold,
    sync: settings.sync,
    onProgress:
      onProgress &&
      ((p) => {
        written.done = p.done;
        written.bytes = p.bytes;
        report();
      }),
    signal: settings.signal,
  });
  if (settings.signal?.aborted)
    return { ...outcome, ...counts(step, plain, settings), collisions: [] };
  if (step) {
    await step.finishDelayed();
    for (const { task } of step.files) {
      const k = task.index;
      outcome.stats.set(
        step.outcome.stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS),
        k * STAT_WORDS,
      );
    }
    outcome.bytes += step.outcome.bytes;
    report();
  }
  writeLinks(odb, plan, outcome, settings);
  const collisions = retryCollisions(odb, plan, outcome, settings, step?.outcome.collided ?? []);
  return { ...outcome, ...counts(step, plain, settings), collisions };
}

function counts(
  step: FilterStep | null,
  plain: FileTask[],
  settings: ExecuteSettings,
): Pick<ExecuteOutcome, 'filteredFiles' | 'delayedFiles' | 'poolFiles'> {
  return {
    filteredFiles: step?.files.length ?? 0,
    delayedFiles: step?.delayedCount ?? 0,
    poolFiles: settings.pool ? plain.length : 0,
  };
}
