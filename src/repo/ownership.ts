/**
 * git's ownership rule (safe.directory, as git 2.39 applies it when it discovers a repository):
 * the worktree's top, the git directory and the gitfile that led there must each belong to the
 * current user — for root, to root or to the user sudo names in SUDO_UID — unless a
 * safe.directory value in the protected config (system, global, command line; never the
 * repository's own) names the repository's path exactly, or is `*`. An empty value clears the
 * values before it. Checked before any file of the repository (config, hooks, filters) is read.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { PcheckoutError } from '../errors.js';
import { GitConfig } from './config.js';
import { interpolatePath } from './config-include.js';

/** What discovery found: the paths git checks, as git spells them (real paths). */
export interface Discovered {
  /** The directory holding `.git`; null for a bare repository. */
  worktree: string | null;
  gitDir: string;
  /** The `.git` file that named gitDir (a linked worktree, a submodule), or null. */
  gitFile: string | null;
}

export function ensureOwnership(found: Discovered, env: NodeJS.ProcessEnv = process.env): void {
  // As bytes: a path under a descriptor (repo/byte-path.ts) is judged by the directory it
  // names, whose real path need not be UTF-8.
  const worktree = found.worktree === null ? null : real(found.worktree);
  const gitDir = real(found.gitDir);
  const assumeOther = parseBoolEnv(env['GIT_TEST_ASSUME_DIFFERENT_OWNER']);
  const gitFile = found.gitFile === null ? null : Buffer.from(found.gitFile);
  const paths = [gitFile, worktree, gitDir].filter((p): p is Buffer => p !== null);
  if (!assumeOther && paths.every((p) => ownedByCurrentUser(p, env))) return;
  const bytes = worktree ?? gitDir;
  if (isSafe(bytes, env)) return;
  const path = bytes.toString('utf8');
  throw new PcheckoutError(
    'ERR_DUBIOUS_OWNERSHIP',
    `detected dubious ownership in repository at '${path}'\n` +
      'To add an exception for this directory, call:\n' +
      '\n' +
      `\tgit config --global --add safe.directory ${quotePretty(path)}`,
    { path },
  );
}

function real(path: string): Buffer {
  try {
    return realpathSync.native(path, { encoding: 'buffer' });
  } catch {
    return Buffer.from(path);
  }
}

/** git's is_path_owned_by_current_uid(): lstat, and root judged by SUDO_UID unless root owns it. */
function ownedByCurrentUser(path: Buffer, env: NodeJS.ProcessEnv): boolean {
  let uid: number;
  try {
    uid = lstatSync(path).uid;
  } catch {
    return false;
  }
  let euid = process.geteuid?.() ?? -1;
  if (euid === 0) {
    if (uid === 0) return true;
    const sudo = env['SUDO_UID'];
    // git takes SUDO_UID only when it is a whole decimal number that fits a uid.
    if (sudo !== undefined && /^\d+$/.test(sudo) && Number(sudo) <= 0xffffffff) euid = Number(sudo);
  }
  return uid === euid;
}

function isSafe(path: Buffer, env: NodeJS.ProcessEnv): boolean {
  let safe = false;
  for (const value of GitConfig.loadProtected(env).getAll('safe.directory')) {
    if (value === '' || value === 'true') {
      // An empty value resets the list; a bare key (read as "true") is git's "no value": the same.
      safe = false;
    } else if (value === '*') {
      safe = true;
    } else if (Buffer.from(interpolatePath(value, env, false) ?? value).equals(path)) {
      safe = true;
    }
  }
  return safe;
}

function parseBoolEnv(v: string | undefined): boolean {
  if (v === undefined) return false;
  return ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase());
}

/** git's sq_quote_buf_pretty(): bare when every byte is plain, else shell single quotes. */
function quotePretty(s: string): string {
  if (s !== '' && /^[A-Za-z0-9+,\-./:=@_^]+$/.test(s)) return s;
  return `'${s.replace(/'/g, "'\\''").replace(/!/g, "'\\!'")}'`;
}
