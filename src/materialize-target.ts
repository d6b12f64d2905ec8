/**
 * Which directories a materialize may write into: an empty (or new) directory, or one that holds
 * pcheckout's own record. A git repository is never one, whatever the options say: its index is
 * not ours to replace, nor its files ours to delete. Everything here is decided before the
 * target's index, or any other file in it, is read.
 */
import {
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fromSystem, PcheckoutError } from './errors.js';
import { makeDirectories } from './mkdirs.js';
import { looksLikeGitDir, type Repo } from './repo/repo.js';

/** Where a materialized directory keeps its index: `.git`, the one name no tree may hold. */
export const MATERIALIZE_META = '.git';

/**
 * The record: a file no git repository has, written into the metadata directory before any
 * file of the tree, and checked before anything in the target is read.
 */
export const MARKER_NAME = 'pcheckout-target';
const MARKER_TEXT =
  "pcheckout materialized directory: this .git holds pcheckout's record of the files here; it is not a git repository\n";

/** The note written beside the index by pcheckout before the record existed. */
const LEGACY_NOTE = 'pcheckout.json';

/** A target that passed: its real path and its metadata directory, the record in it written. */
export interface ClaimedTarget {
  worktree: string;
  meta: string;
}

const notOurs = (target: string, why: string): never => {
  throw new PcheckoutError('ERR_TARGET_NOT_OURS', `cannot materialize into ${target}: ${why}`, {
    path: target,
  });
};

function kindAt(path: string): 'missing' | 'dir' | 'file' | 'link' | 'other' {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw fromSystem(err, 'lstat', path);
  }
  if (st.isSymbolicLink()) return 'link';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

/** What git takes for a git directory, or a part of one: a HEAD, objects/ or refs/ in it. */
function looksLikeRepository(dir: string): boolean {
  return ['HEAD', 'objects', 'refs', 'commondir', 'gitdir'].some(
    (name) => kindAt(join(dir, name)) !== 'missing',
  );
}

function hasRecord(meta: string): boolean {
  try {
    return readFileSync(join(meta, MARKER_NAME), 'utf8') === MARKER_TEXT;
  } catch {
    return false;
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The real path a directory not made yet will have. */
function realOfNew(path: string): string {
  const rest: string[] = [];
  let dir = path;
  while (kindAt(dir) === 'missing' && dirname(dir) !== dir) {
    rest.unshift(basename(dir));
    dir = dirname(dir);
  }
  return join(realOrSelf(dir), ...rest);
}

const within = (path: string, dir: string): boolean =>
  path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/**
 * The path that names a target for the calls of this process that must not run at once: its
 * real path, or that of its nearest existing ancestor with the rest after it.
 */
export function targetKey(targetDir: string): string {
  const given = resolve(targetDir);
  return kindAt(given) === 'missing' ? realOfNew(given) : realOrSelf(given);
}

/**
 * Decides whether `targetDir` may be materialized into, and claims it (the record written
 * first) when it may. `force`: a non-empty plain directory without the record is taken too —
 * never a repository, nor one inside or around the source repository.
 */
export function claimTarget(
  targetDir: string,
  repo: Repo,
  force: boolean,
  dryRun = false,
): ClaimedTarget {
  const given = resolve(targetDir);
  const kind = kindAt(given);
  if (kind !== 'dir' && kind !== 'missing') {
    let isDir = false;
    try {
      isDir = kind === 'link' && statSync(given).isDirectory();
    } catch {
      /* a dangling link */
    }
    if (!isDir) notOurs(given, 'it exists and is not a directory');
  }
  // Every check on the real path (a symlinked target is judged by where its writes would land),
  // and all of them before anything is made.
  const target = targetKey(targetDir);
  refuseOverlap(target, repo);
  refuseEnclosed(target);

  if (kind === 'missing') {
    // A dry run says what a materialize would write into a new directory without making it.
    if (dryRun) return { worktree: target, meta: join(target, MATERIALIZE_META) };
    try {
      makeDirectories(target);
    } catch (err) {
      throw fromSystem(err, 'create', target);
    }
  }
  const meta = join(target, MATERIALIZE_META);
  const ours = judgeRecordDir(target, meta);
  if (!ours) {
    const entries = readdirSync(target).filter((n) => n !== MATERIALIZE_META);
    if (entries.length > 0 && !force) {
      notOurs(
        target,
        'it is not empty and holds no pcheckout record (force: true / --force takes a plain directory anyway)',
      );
    }
  }
  if (!hasRecord(meta) && !dryRun) {
    try {
      makeDirectories(meta);
      writeFileSync(join(meta, MARKER_NAME), MARKER_TEXT);
    } catch (err) {
      throw fromSystem(err, 'create', meta);
    }
  }
  return { worktree: target, meta };
}

/** A target inside the source repository's worktree or git directory, or around either. */
function refuseOverlap(target: string, repo: Repo): void {
  // Compared as bytes: the repository's real path need not be UTF-8 (repo/byte-path.ts).
  const bytes = (path: string): string => Buffer.from(path).toString('latin1');
  const realBytes = (path: string): string => {
    try {
      return realpathSync.native(path, { encoding: 'buffer' }).toString('latin1');
    } catch {
      return bytes(resolve(path));
    }
  };
  const worktree = repo.worktree === '' ? null : realBytes(repo.worktree);
  const own = [repo.gitDir, repo.commonDir].map(realBytes);
  if (worktree !== null) own.push(worktree);
  const at = bytes(target);
  for (const dirBytes of own) {
    const dir = Buffer.from(dirBytes, 'latin1').toString('utf8');
    if (within(at, dirBytes)) {
      const what = dirBytes === worktree ? "the repository's worktree" : 'the git directory';
      throw new PcheckoutError(
        'ERR_INVALID_OPTION',
        `cannot materialize into ${target}: it is inside ${what} ${dir} (use checkout there, or a directory outside)`,
        { path: target },
      );
    }
    if (within(dirBytes, at)) {
      throw new PcheckoutError(
        'ERR_INVALID_OPTION',
        `cannot materialize into ${target}: it contains the repository at ${dir}`,
        { path: target },
      );
    }
  }
}

/**
 * A git directory anywhere up the path (a target under some repository's .git), or a target
 * inside another materialized directory, whose record would then describe our files too.
 */
function refuseEnclosed(target: string): void {
  for (let dir = dirname(target); ; dir = dirname(dir)) {
    if (looksLikeGitDir(dir)) {
      notOurs(target, `it is inside the git directory ${dir}`);
    }
    if (hasRecord(join(dir, MATERIALIZE_META))) {
      notOurs(target, `it is inside the materialized directory ${dir}`);
    }
    if (dirname(dir) === dir) break;
  }
}

/**
 * Refuses a target that is, or holds, a git repository where the record would go; true when
 * the record directory is pcheckout's own (a record, or the note of a target written before
 * the record existed).
 */
function judgeRecordDir(target: string, meta: string): boolean {
  if (looksLikeGitDir(target)) notOurs(target, 'it is a git repository');
  const metaKind = kindAt(meta);
  if (metaKind === 'file' || metaKind === 'link' || metaKind === 'other') {
    notOurs(
      target,
      `it holds a git repository (${meta} is a ${metaKind === 'file' ? 'gitfile' : 'link'})`,
    );
  }
  if (metaKind !== 'dir') return false;
  if (looksLikeRepository(meta)) notOurs(target, 'it holds a git repository');
  const ours = hasRecord(meta) || kindAt(join(meta, LEGACY_NOTE)) === 'file';
  if (!ours && readdirSync(meta).length > 0) {
    notOurs(target, `${meta} exists and holds no pcheckout record`);
  }
  return ours;
}
