import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ensureOwnership } from './ownership.js';
import { GitConfig } from './config.js';
import { PcheckoutError } from '../errors.js';
import { parseSharedRepository } from '../perms.js';

export interface Repo {
  /** The per-worktree git directory (HEAD, index). */
  gitDir: string;
  /** The shared git directory (objects, refs, config); equal to gitDir outside linked worktrees. */
  commonDir: string;
  /** The top of the worktree ('' for a bare repository, opened only for a materialize). */
  worktree: string;
  config: GitConfig;
  /** The object directory followed by its alternates, in lookup order. */
  objectDirs: string[];
  /** core.sharedRepository, parsed (0: modes follow the umask; see perms.ts). */
  shared: number;
}

const KNOWN_EXTENSIONS = new Set([
  'noop',
  'objectformat',
  'worktreeconfig',
  'preciousobjects',
  'partialclone',
]);

/**
 * Finds the repository at or above `start`, as git does for `git -C start`: `GIT_DIR` names the
 * git directory instead (relative to `start`), and the worktree is then `GIT_WORK_TREE`,
 * `core.worktree` or `start` itself; `GIT_WORK_TREE` alone overrides the discovered worktree.
 */
export function openRepo(
  start: string,
  env: NodeJS.ProcessEnv = process.env,
  options: OpenOptions = {},
): Repo {
  const from = resolve(start);
  if (!existsSync(from)) {
    throw new PcheckoutError('ERR_NOT_A_REPOSITORY', `${from} does not exist`, { path: from });
  }
  const envWorktree = env['GIT_WORK_TREE'] ? resolve(from, env['GIT_WORK_TREE']) : undefined;
  const envGitDir = env['GIT_DIR'];
  if (envGitDir) {
    const dir = resolve(from, envGitDir);
    const gitDir = looksLikeGitDir(dir) ? dir : gitFileTarget(dir);
    if (gitDir === undefined) {
      throw new PcheckoutError('ERR_NOT_A_REPOSITORY', `not a git repository: '${envGitDir}'`, {
        path: dir,
      });
    }
    return finish(gitDir, from, envWorktree ?? null, options);
  }
  // A repository found by discovery (not named by GIT_DIR, as for git) must pass git's
  // ownership rule before its config is read.
  for (let dir = from; ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    const gitDir = gitDirAt(dotGit);
    if (gitDir !== undefined) {
      const gitFile = gitDir === dotGit ? null : dotGit;
      ensureOwnership({ worktree: dir, gitDir, gitFile }, env);
      return finish(gitDir, dir, envWorktree, options);
    }
    if (dir === from && looksLikeGitDir(dir)) {
      ensureOwnership({ worktree: null, gitDir: dir, gitFile: null }, env);
      return finish(dir, undefined, envWorktree, options);
    }
    if (dirname(dir) === dir) break;
  }
  throw new PcheckoutError(
    'ERR_NOT_A_REPOSITORY',
    `not a git repository (or any parent): ${from}`,
    {
      path: from,
    },
  );
}

function gitDirAt(dotGit: string): string | undefined {
  let st;
  try {
    st = statSync(dotGit);
  } catch {
    return undefined;
  }
  if (st.isDirectory()) return looksLikeGitDir(dotGit) ? dotGit : undefined;
  if (!st.isFile()) return undefined;
  // A gitfile, as in linked worktrees and submodules: "gitdir: <path>".
  const text = readFileSync(dotGit, 'utf8');
  const m = /^gitdir: (.+?)\r?\n?$/.exec(text);
  if (!m) {
    throw new PcheckoutError('ERR_NOT_A_REPOSITORY', `invalid gitfile format: ${dotGit}`, {
      path: dotGit,
    });
  }
  const target = resolve(dirname(dotGit), m[1]!);
  if (!looksLikeGitDir(target)) {
    throw new PcheckoutError(
      'ERR_NOT_A_REPOSITORY',
      `${dotGit} points to ${target}, which is not a git directory`,
      {
        path: dotGit,
      },
    );
  }
  return target;
}

/** GIT_DIR may name a gitfile too. */
function gitFileTarget(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? gitDirAt(path) : undefined;
  } catch {
    return undefined;
  }
}

/** A git directory: HEAD, with objects/ and refs/ in it or in its commondir. */
export function looksLikeGitDir(dir: string): boolean {
  const common = commonDirOf(dir);
  return (
    existsSync(join(dir, 'HEAD')) &&
    existsSync(join(common, 'objects')) &&
    existsSync(join(common, 'refs'))
  );
}

function commonDirOf(gitDir: string): string {
  try {
    const text = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
    return resolve(gitDir, text);
  } catch {
    return gitDir;
  }
}

export interface OpenOptions {
  /** A bare repository is opened too (its worktree ''): a materialize needs none. */
  allowBare?: boolean;
}

/**
 * `explicit`: the worktree GIT_WORK_TREE names; null when GIT_DIR was given without it (then
 * core.worktree, else — unless the repository is bare — `worktreeGuess`, the current directory).
 */
function finish(
  gitDir: string,
  worktreeGuess: string | undefined,
  explicit: string | null | undefined,
  options: OpenOptions,
): Repo {
  const commonDir = commonDirOf(gitDir);
  const config = GitConfig.load(commonDir, gitDir);
  checkFormat(config, gitDir);
  let worktree = worktreeGuess;
  const configured = config.get('core.worktree');
  if (configured !== undefined) worktree = resolve(gitDir, configured);
  if (explicit) worktree = explicit;
  const bare =
    worktree === undefined ||
    (config.getBool('core.bare') === true && configured === undefined && !explicit);
  if (bare && options.allowBare) worktree = '';
  else if (bare) {
    throw new PcheckoutError(
      'ERR_NOT_A_REPOSITORY',
      `${gitDir} is a bare repository: it has no worktree to check out into`,
      {
        path: gitDir,
      },
    );
  }
  return {
    gitDir,
    commonDir,
    worktree: worktree!,
    config,
    objectDirs: objectDirs(join(commonDir, 'objects')),
    shared: parseSharedRepository(config.get('core.sharedrepository')),
  };
}

function checkFormat(config: GitConfig, gitDir: string): void {
  const version = config.getInt('core.repositoryformatversion') ?? 0;
  if (version !== 0 && version !== 1) {
    throw new PcheckoutError(
      'ERR_UNSUPPORTED',
      `${gitDir}: repository format version ${version} is not supported`,
    );
  }
  if (version === 1) {
    const format = config.get('extensions.objectformat');
    if (format !== undefined && format.toLowerCase() !== 'sha1') {
      throw new PcheckoutError(
        'ERR_UNSUPPORTED',
        `${gitDir}: object format ${format} is not supported (SHA-1 only)`,
      );
    }
    for (const key of config.keys()) {
      const m = /^extensions\.([^.]+)$/.exec(key);
      if (m && !KNOWN_EXTENSIONS.has(m[1]!)) {
        throw new PcheckoutError(
          'ERR_UNSUPPORTED',
          `${gitDir}: repository extension ${m[1]} is not supported`,
        );
      }
    }
  }
}

/** The object directory and, recursively, the ones its info/alternates file names. */
function objectDirs(primary: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, depth: number): void => {
    if (out.includes(dir) || depth > 5) return;
    out.push(dir);
    let text: string;
    try {
      text = readFileSync(join(dir, 'info', 'alternates'), 'utf8');
    } catch {
      return;
    }
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      visit(isAbsolute(line) ? line : resolve(dir, line), depth + 1);
    }
  };
  visit(primary, 0);
  return out;
}
