/**
 * The worktree's shape before the files go in: what the plan removes (files, emptied
 * directories, trees cleared for a forced write), then the directories it makes, parents first,
 * and the gitlinks' directories.
 */
import { PcheckoutError, type WrittenSoFar } from '../errors.js';
import type { Plan } from '../plan/plan.js';
import { interleaveByParent } from './schedule.js';
import type { Errno, WorktreeDir } from '../worktree.js';

// Nothing of ours there: gone, or a leading component is a file or a link (never followed).
export const ENOENT_LIKE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
export const isDir = (mode: number | string): boolean =>
  typeof mode === 'number' && (mode & S_IFMT) === S_IFDIR;

// Below this many removals, unlinks in parallel do not pay for their threads.
const PARALLEL_UNLINKS = 16;

/**
 * The removals' errno names in plan order: files unlinked on `threads` threads when asked (a
 * network filesystem, each unlink a round trip; spread so that neighbours are in different
 * directories), submodule directories on this thread.
 */
function unlinkAll(wt: WorktreeDir, plan: Plan, threads: number): Errno[] {
  const { deletes } = plan;
  const files = deletes.filter((d) => !d.dir).map((d) => d.path);
  if (threads <= 1 || files.length < PARALLEL_UNLINKS)
    return deletes.map(({ path, dir }) => (dir ? wt.rmdir(path) : wt.unlink(path)));
  const order = interleaveByParent(files);
  const codes = new Map<string, Errno>();
  wt.unlinkMany(order, threads).forEach((code, k) => codes.set(order[k]!, code));
  return deletes.map(({ path, dir }) => (dir ? wt.rmdir(path) : codes.get(path)!));
}

/** Removes what the plan deletes; returns git's warnings (submodule directories left). */
export function removeOld(
  wt: WorktreeDir,
  plan: Plan,
  sofar: WrittenSoFar,
  threads: number,
): string[] {
  const notices: string[] = [];
  const codes = unlinkAll(wt, plan, threads);
  for (const [k, { path, dir }] of plan.deletes.entries()) {
    const code = codes[k]!;
    if (code === null) {
      sofar.removed++;
      continue;
    }
    // A submodule directory that is not empty stays, as with git, which says so.
    if (dir && (code === 'ENOTEMPTY' || code === 'EEXIST')) {
      notices.push(`unable to rmdir '${display(path)}': Directory not empty`);
      continue;
    }
    if (!ENOENT_LIKE.has(code)) throw wt.error(code, 'remove', path);
  }
  for (const dir of plan.rmdirs) {
    wt.rmdir(dir); // not empty (untracked or ignored files stay), or already gone
  }
  for (const path of plan.clears) {
    const code = wt.removeTree(path);
    if (code !== null) throw wt.error(code, 'remove', path);
  }
  return notices;
}

/**
 * Makes the directories, parents first, then the gitlinks' directories; returns the gitlinks
 * whose directory it made (git records the stat data of those only: a submodule directory
 * already there keeps its entry's stat data zero). One that exists must be a real directory:
 * a file or symlink in its place (or in place of one of its parents) is replaced when the
 * plan allows it, else the checkout stops here.
 */
const DIR_BATCH = 1024;

export function makeDirs(
  wt: WorktreeDir,
  plan: Plan,
  dirs: readonly string[],
  gitlinks: number[],
  aborted: (() => boolean) | undefined,
): number[] {
  // Whether it made the directory (false: a real directory was there).
  const make = (rel: string, again = false): boolean => {
    const code = wt.mkdir(rel);
    if (code === null) return true;
    if ((code === 'ELOOP' || code === 'ENOTDIR') && !again) {
      // A leading component is a symlink or a file: make it a real directory first.
      const slash = rel.lastIndexOf('/');
      if (slash > 0) {
        make(rel.slice(0, slash));
        return make(rel, true);
      }
    }
    if (code !== 'EEXIST') throw wt.error(code, 'create directory', rel);
    if (isDir(wt.lstatMode(rel))) return false;
    if (!plan.replaceInTheWay) {
      throw new PcheckoutError(
        'ERR_WOULD_OVERWRITE',
        `cannot create directory ${display(rel)}: a file or symlink is in the way`,
        { path: display(rel), paths: [display(rel)] },
      );
    }
    const replaced = wt.unlink(rel) ?? wt.mkdir(rel);
    if (replaced !== null) throw wt.error(replaced, 'create directory', rel);
    return true;
  };
  // A native call makes them or finds them real directories (a call per directory from
  // JavaScript cost ~10 µs: 5,095 directories in the Linux tree), DIR_BATCH at a time so that
  // an abort lands between batches (the Linux tree's ~53 ms in one call was too long to wait);
  // what it could not settle goes through the checks above, in order.
  for (let at = 0; at < dirs.length; at += DIR_BATCH) {
    if (aborted?.()) throw new PcheckoutError('ERR_ABORTED', 'the checkout was aborted');
    const batch = dirs.slice(at, at + DIR_BATCH);
    const done = wt.ensureDirs(batch);
    batch.forEach((dir, k) => {
      if (done[k] !== null) make(dir);
    });
  }
  return gitlinks.filter((k) => make(plan.result.name(k)));
}

/**
 * The directories of each depth at once on native threads (their round trips overlap on a
 * network filesystem), parents' depth first; any that was not simply created (something
 * there) goes through makeDirs' checks.
 */
export function makeDirsConcurrently(wt: WorktreeDir, plan: Plan, threads: number): number[] {
  const byDepth: string[][] = [];
  for (const dir of plan.dirs) {
    let depth = 0;
    for (let i = dir.indexOf('/'); i >= 0; i = dir.indexOf('/', i + 1)) depth++;
    (byDepth[depth] ??= []).push(dir);
  }
  for (const depth of byDepth) {
    if (!depth) continue;
    const level = interleaveByParent(depth);
    const results = wt.mkdirMany(level, threads);
    // Whatever failed is retried with the checks (in order, parents first) before going deeper.
    const rest = level.filter((_, i) => results[i] !== null);
    if (rest.length > 0) makeDirs(wt, plan, rest, [], undefined);
  }
  return makeDirs(wt, plan, [], plan.gitlinks, undefined);
}
