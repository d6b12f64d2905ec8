/**
 * The executor: carries out a Plan in git's order — removals first (files, then the
 * directories they leave empty), then whatever is in the way, directories, regular files
 * (those through a filter driver first, on this thread; the rest in process or on the pool;
 * then the files a filter delayed), and symlinks and gitlinks last, on this thread, so that no
 * link made during the writes can redirect one.
 */
import { FILE_COLLIDED, FILE_FAILED, type NativeConversion, type NativeOdb } from '../addon.js';
import { PcheckoutError, callbackFailure, withWritten, type WrittenSoFar } from '../errors.js';
import { STAT_WORDS } from '../index/write.js';
import { readObject } from '../repo/objects.js';
import { killPoint } from '../kill-point.js';
import type { Conversions } from '../plan/conversion.js';
import type { FileTask } from '../plan/locate.js';
import type { Plan } from '../plan/plan.js';
import { gatherStats } from '../plan/rows.js';
import { FilterStep, type FilterStepSettings } from './filtered.js';
import { ENOENT_LIKE, isDir, makeDirs, makeDirsConcurrently, removeOld } from './dirs.js';
import { writeFiles, type Progress, type WriteOutcome } from './write.js';
import type { WorktreeDir } from '../worktree.js';

export interface ExecuteSettings {
  root: string;
  /** The same root as a directory handle: every path operation goes through it. */
  worktree: WorktreeDir;
  /** Threads writing the files: more than one when they go to the pool. */
  threads: number;
  /** `n` object readers for them, one per thread. */
  readers: (n: number) => NativeOdb[];
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
  /** Parallel writers in one directory at a time (write/schedule.ts); 0: no limit. */
  perDir: number;
  /** The store's layout directory (write/store.ts) and its link mode, or null. */
  store: { root: string; link: boolean } | null;
  /** core.symlinks: false writes a link's target as a plain file. */
  symlinks: boolean;
  /** Per result entry, what its bytes go through (null: nothing for any). */
  conversions: Conversions | null;
  /**
   * The filter step's settings (write/filtered.ts) for the files whose conversion goes through
   * a filter driver: written on this thread, outside the pool, as git does (a driver may not
   * be safe to run concurrently). Needed when any conversion is `filtered`.
   */
  filters: Omit<FilterStepSettings, 'root' | 'sync'> | null;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  /** Whether the call was aborted (read between batches of the synchronous steps). */
  aborted?: () => boolean;
}

export interface ExecuteOutcome extends WriteOutcome {
  /** git's warnings about removals (a submodule directory not empty, left in place). */
  notices: string[];
  /** Paths that collided with another entry (case-insensitive filesystems), sorted. */
  collisions: string[];
  /** Regular files written through external filters, and how many of them were delayed. */
  filteredFiles: number;
  delayedFiles: number;
  /** Regular files written on the pool (0 when it was not used). */
  poolFiles: number;
}

function statInto(wt: WorktreeDir, stats: Uint32Array, k: number, rel: string): void {
  const code = wt.lstatInto(rel, stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS));
  if (code !== null) throw wt.error(code, 'stat', rel);
}

/**
 * Symlinks go last and on this thread: a link made while workers write could redirect them.
 * Then the stat data of the gitlinks whose directory was made here.
 */
function writeLinks(
  odb: NativeOdb,
  plan: Plan,
  outcome: WriteOutcome,
  settings: ExecuteSettings,
  madeGitlinks: readonly number[],
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
  for (const k of madeGitlinks) statInto(wt, outcome.stats, k, result.name(k));
}

/** ASCII case folding, as git compares paths when core.ignorecase is set (fspathcmp). */
const fold = (name: string): string =>
  name.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));

/** The '/'-separated leading directories of a path, shortest first. */
function leadingDirs(name: string): string[] {
  const dirs: string[] = [];
  for (let s = name.indexOf('/'); s > 0; s = name.indexOf('/', s + 1)) dirs.push(name.slice(0, s));
  return dirs;
}

/** What a path taken by another entry (or a link in the way) reports. */
const COLLIDING = new Set(['EEXIST', 'ENOTDIR', 'EISDIR', 'ELOOP', 'ENOTEMPTY']);

/**
 * Entries whose path was taken when written: names one filesystem treats as the same (FILE_X
 * and file_x; a file a and the directory A of A/B), or (forced) something in the way. git
 * writes entries one by one in index order, each removing what is at its path, so the last of
 * a colliding group wins; the groups are written again that way here, one entry at a time,
 * whichever worker won the race. Files a filter driver wrote are not written again (their
 * step ran first, in index order, taking the last of its own collided names, as git's
 * sequential pass does before its parallel queue); they are reported with their group.
 * Returns every path of each colliding group, sorted.
 */
function retryCollisions(
  odb: NativeOdb,
  plan: Plan,
  outcome: WriteOutcome,
  settings: ExecuteSettings,
  filtered: FileTask[],
): string[] {
  if (outcome.collided.length === 0) return [];
  const { result } = plan;
  const collided = new Set(outcome.collided);
  const failed = new Set(outcome.failures.map((f) => f.index));
  const folds = new Set<string>();
  const folderDirs = new Set<string>();
  for (const k of collided) {
    const f = fold(result.name(k));
    folds.add(f);
    for (const d of leadingDirs(f)) folderDirs.add(d);
  }
  // The groups: entries written now whose folded path is a collided one's, one of its leading
  // directories, or lies under it.
  const members: number[] = [];
  for (let j = 0; j < result.count; j++) {
    if (plan.write[j] !== 1 || failed.has(j)) continue;
    const f = fold(result.name(j));
    if (folds.has(f) || folderDirs.has(f) || leadingDirs(f).some((d) => folds.has(d)))
      members.push(j);
  }
  const sizes = new Map(plan.files.map((f) => [f.index, f.size]));
  const byFilter = new Set(filtered.map((f) => f.index));
  const still = new Set<number>();
  for (const k of members) {
    if (byFilter.has(k)) continue;
    if (!rewrite(odb, plan, k, sizes.get(k) ?? 0, outcome, settings, collided.has(k))) still.add(k);
  }
  // A collided entry alone in its group met something in the way, not another entry: it is
  // reported only if it could not be written.
  const memberFolds = new Map<string, number>();
  const memberDirs = new Set<string>();
  for (const k of members) {
    const f = fold(result.name(k));
    memberFolds.set(f, (memberFolds.get(f) ?? 0) + 1);
    for (const d of leadingDirs(f)) memberDirs.add(d);
  }
  const alone = (k: number): boolean => {
    const f = fold(result.name(k));
    return (
      memberFolds.get(f) === 1 &&
      !memberDirs.has(f) &&
      !leadingDirs(f).some((d) => memberFolds.has(d))
    );
  };
  const names = members.filter((k) => still.has(k) || !alone(k)).map((k) => result.display(k));
  return names.sort();
}

/** The one-file conversion fields of a retried write of result entry k. */
function retryConversion(
  conv: Conversions | null,
  k: number,
): { conversions?: NativeConversion[]; convert?: Uint8Array } {
  const p = conv?.ids[k] ?? 0;
  if (p === 0) return {};
  const { crlf, ident, identInCore, encoding } = conv!.profiles[p]!;
  return { conversions: [{ crlf, ident, identInCore, encoding }], convert: Uint8Array.of(1) };
}

/**
 * Writes one entry as git's checkout_entry does when forced: leading components that are not
 * real directories replaced (never followed), whatever is at the path removed, then the
 * entry. Without leave to replace (a switch), anything in the way leaves it collided. Returns
 * false if it is still collided.
 */
function rewrite(
  odb: NativeOdb,
  plan: Plan,
  k: number,
  size: number,
  outcome: WriteOutcome,
  settings: ExecuteSettings,
  countBytes: boolean,
): boolean {
  const { result } = plan;
  const wt = settings.worktree;
  const name = result.name(k);
  const mode = result.modes[k]!;
  const check = (code: string | null, action: string, rel: string): boolean => {
    if (code === null) return true;
    if (COLLIDING.has(code)) return false;
    throw wt.error(code, action, rel);
  };
  for (const dir of leadingDirs(name)) {
    const at = wt.lstatMode(dir);
    if (isDir(at)) continue;
    if (typeof at === 'number') {
      if (!plan.replaceInTheWay) return false;
      if (!check(wt.unlink(dir), 'remove', dir)) return false;
    }
    if (!check(wt.mkdir(dir), 'create directory', dir)) return false;
  }
  const at = wt.lstatMode(name);
  if (isDir(at)) {
    if (mode === 0o160000) {
      statInto(wt, outcome.stats, k, name);
      return true;
    }
    if (!plan.replaceInTheWay) return false;
    if (!check(wt.removeTree(name), 'remove', name)) return false;
  } else if (typeof at === 'number') {
    if (!check(wt.unlink(name), 'remove', name)) return false;
  }
  if (mode === 0o160000 || mode === 0o120000) {
    let code: string | null;
    if (mode === 0o160000) {
      code = wt.mkdir(name);
    } else {
      const blob = readObject(odb, result.oidHex(k));
      code = settings.symlinks ? wt.symlink(blob.data, name) : wt.writeNew(name, blob.data, 0o666);
    }
    if (!check(code, mode === 0o160000 ? 'create directory' : 'create symlink', name)) return false;
    statInto(wt, outcome.stats, k, name);
    return true;
  }
  const res = odb.writeFiles({
    root: settings.root,
    paths: Buffer.concat([result.pathBytes(k), Buffer.alloc(1)]),
    oids: Buffer.from(result.oid(k)),
    modes: Uint32Array.of(mode),
    sizes: Float64Array.of(size),
    streamThreshold: settings.streamThreshold,
    sync: settings.sync,
    ...retryConversion(settings.conversions, k),
  });
  for (const w of res.warnings) outcome.warnings.push({ index: k, message: w.message });
  if (res.status[0] === FILE_FAILED) {
    outcome.failures.push({ index: k, code: res.errors[0]!.code, message: res.errors[0]!.message });
    return true;
  }
  if (res.status[0] === FILE_COLLIDED) return false;
  outcome.stats.set(res.stats, k * STAT_WORDS);
  if (countBytes) outcome.bytes += res.bytes;
  return true;
}

export async function execute(
  odb: NativeOdb,
  plan: Plan,
  settings: ExecuteSettings,
): Promise<ExecuteOutcome> {
  const sofar: WrittenSoFar = {
    stage: 'remove',
    removed: 0,
    files: 0,
    total: plan.files.length + plan.symlinks.length,
  };
  try {
    return await executeSteps(odb, plan, settings, sofar);
  } catch (err) {
    // The error carries how far the worktree got, for the caller to tell the user.
    throw withWritten(err, { ...sofar });
  }
}

/**
 * The index's stat data as the writes begin: the kept entries' (Plan.keptStats), gathered in
 * one native pass into the array the writers then fill. A checkout that writes every entry
 * starts from zeros.
 */
function keptStatData(plan: Plan): Uint32Array | undefined {
  if (plan.write.indexOf(0) < 0) return undefined;
  const { src, idx, freshSlot, smudge, old, fresh } = plan.keptStats;
  return gatherStats({ src, idx, write: plan.write, freshSlot, smudge }, old, fresh);
}

async function executeSteps(
  odb: NativeOdb,
  plan: Plan,
  settings: ExecuteSettings,
  sofar: WrittenSoFar,
): Promise<ExecuteOutcome> {
  const notices = removeOld(
    settings.worktree,
    plan,
    sofar,
    settings.concurrentDirs ? settings.dirThreads : 1,
  );
  killPoint();
  sofar.stage = 'directories';
  const madeGitlinks = settings.concurrentDirs
    ? makeDirsConcurrently(settings.worktree, plan, settings.dirThreads)
    : makeDirs(settings.worktree, plan, plan.dirs, plan.gitlinks, settings.aborted);
  killPoint();
  // Filtered files first, in index order, then the rest, then the delayed ones: git's order
  // (its sequential pass, the parallel queue, finish_delayed_checkout). A required filter that
  // fails stops the checkout before the other files are written, as it stops git's.
  const { filtered, plain } = partition(plan.files, settings.conversions);
  const step = filterStep(odb, plan, filtered, settings);
  const progress = progressOf(settings.onProgress, plan.files.length, step);
  sofar.stage = 'files';
  if (step) {
    await step.writeFirstPass(settings.signal);
    sofar.files = step.done;
    progress.reportHere();
  }
  const outcome = await writeFiles(plan.result, plain, plan.replace, {
    stats: keptStatData(plan),
    root: settings.root,
    threads: settings.threads,
    readers: settings.readers,
    streamThreshold: settings.streamThreshold,
    sync: settings.sync,
    conversions: settings.conversions,
    perDir: settings.perDir,
    store: settings.store,
    onProgress: progress.pool,
    signal: settings.signal,
    ...(settings.aborted ? { aborted: settings.aborted } : {}),
  });
  const counts = {
    filteredFiles: filtered.length,
    delayedFiles: step?.delayedCount ?? 0,
    poolFiles: settings.threads > 1 ? plain.length : 0,
  };
  if (settings.signal?.aborted || settings.aborted?.())
    return { ...outcome, ...counts, collisions: [], notices };
  if (step) {
    await step.finishDelayed();
    for (const { task } of step.files) {
      const at = task.index * STAT_WORDS;
      outcome.stats.set(step.outcome.stats.subarray(at, at + STAT_WORDS), at);
    }
    outcome.bytes += step.outcome.bytes;
    outcome.collided.push(...step.outcome.collided);
    outcome.warnings.push(...step.outcome.warnings);
    progress.reportHere();
  }
  sofar.files = plan.files.length - outcome.failures.length - outcome.collided.length;
  sofar.stage = 'links';
  writeLinks(odb, plan, outcome, settings, madeGitlinks);
  sofar.files += plan.symlinks.length;
  sofar.stage = 'collisions';
  killPoint();
  const collisions = retryCollisions(odb, plan, outcome, settings, filtered);
  return { ...outcome, ...counts, collisions, notices };
}

/**
 * The caller's progress over both writers: the filter step's files and the pool's (or
 * in-process) ones. `pool` is handed to writeFiles; `reportHere` is for the points this module
 * reports itself (writeFiles gives a throwing callback its code, so these do the same).
 */
function progressOf(
  onProgress: ExecuteSettings['onProgress'],
  total: number,
  step: ReturnType<typeof filterStep>,
): { pool: ((p: { done: number; bytes: number }) => void) | undefined; reportHere: () => void } {
  const written = { done: 0, bytes: 0 };
  const report = (): void =>
    onProgress?.({
      done: written.done + (step?.done ?? 0),
      total,
      bytes: written.bytes + (step?.outcome.bytes ?? 0),
    });
  const reportHere = (): void => {
    try {
      report();
    } catch (err) {
      throw callbackFailure(err);
    }
  };
  const pool =
    onProgress &&
    ((p: { done: number; bytes: number }): void => {
      written.done = p.done;
      written.bytes = p.bytes;
      report();
    });
  return { pool, reportHere };
}

/** plan.files split by their conversion: through a filter driver (index order), or not. */
function partition(
  files: FileTask[],
  conv: Conversions | null,
): { filtered: FileTask[]; plain: FileTask[] } {
  if (!conv || files.length === 0 || !conv.profiles.some((c) => c.filtered)) {
    return { filtered: [], plain: files };
  }
  const filtered: FileTask[] = [];
  const plain: FileTask[] = [];
  for (const f of files) (conv.profiles[conv.ids[f.index]!]!.filtered ? filtered : plain).push(f);
  filtered.sort((a, b) => a.index - b.index);
  return { filtered, plain };
}

function filterStep(
  odb: NativeOdb,
  plan: Plan,
  filtered: FileTask[],
  settings: ExecuteSettings,
): FilterStep | null {
  if (filtered.length === 0) return null;
  const { conversions: conv, filters } = settings;
  if (filters === null) {
    throw new PcheckoutError('ERR_INTERNAL', 'files to filter but no filter session');
  }
  const files = filtered.map((task) => {
    const name = conv!.profiles[conv!.ids[task.index]!]!.driver!;
    return { task, driver: filters.session.drivers.get(name)! };
  });
  return new FilterStep(odb, plan.result, files, plan.replace, {
    ...filters,
    root: settings.root,
    sync: settings.sync,
  });
}
