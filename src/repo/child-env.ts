/**
 * The environment git gives the programs it runs (hooks, filter drivers): ours, plus
 * GIT_EXEC_PATH (git's main sets it for every child), GIT_PREFIX (where the command was run,
 * below the worktree's top), and GIT_DIR when the git directory is not the worktree's `.git`
 * directory (a `.git` file: a linked worktree or a separate git dir), where git's setup
 * exports the directory it found so that a child's git finds the same one.
 */
import { execFileSync } from 'node:child_process';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { forChild } from './byte-path.js';
import type { Repo } from './repo.js';

let execPath: string | null | undefined;

/** `git --exec-path`, asked once per process (null when git cannot be run). */
function gitExecPath(): string | null {
  if (execPath === undefined) {
    try {
      execPath = execFileSync('git', ['--exec-path'], { encoding: 'utf8', stdio: 'pipe' }).trim();
    } catch {
      execPath = null;
    }
  }
  return execPath;
}

/** GIT_PREFIX as git's setup sets it: where `start` is below the worktree's top ("" at the top). */
export function gitPrefix(repo: Repo, start: string): string {
  const rel = relative(repo.worktree, resolve(start));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return '';
  return `${rel.split(sep).join('/')}/`;
}

export function gitChildEnv(
  repo: Repo,
  start: string,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, GIT_PREFIX: gitPrefix(repo, start) };
  if (env['GIT_EXEC_PATH'] === undefined) {
    const exec = gitExecPath();
    if (exec !== null) env['GIT_EXEC_PATH'] = exec;
  }
  if (env['GIT_DIR'] === undefined && repo.gitDir !== join(repo.worktree, '.git'))
    env['GIT_DIR'] = forChild(repo.gitDir, repo.worktree);
  return env;
}
