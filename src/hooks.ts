import { spawn } from 'node:child_process';
import { forChild } from './repo/byte-path.js';
import { accessSync, constants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { gitChildEnv } from './repo/child-env.js';
import type { Repo } from './repo/repo.js';

export interface HookResult {
  name: string;
  /** The hook's exit status (128 + signal number if it was killed). */
  status: number;
}

/** The hook's path if it exists and is executable (core.hooksPath, else <common dir>/hooks). */
function hookPath(repo: Repo, name: string): string | undefined {
  const configured = repo.config.get('core.hookspath');
  const dir =
    configured === undefined
      ? join(repo.commonDir, 'hooks')
      : isAbsolute(configured)
        ? configured
        : resolve(repo.worktree, configured); // git runs hooks from the worktree's top
  const path = join(dir, name);
  try {
    if (!statSync(path).isFile()) return undefined;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

/**
 * Runs a hook as git does (run_hooks): from the worktree's top, stdin from /dev/null, its
 * output to our stderr, with the environment git gives its children (repo/child-env.ts;
 * `start` is the directory the repository was opened from). Null when there is no such hook.
 */
export async function runHook(
  repo: Repo,
  start: string,
  name: string,
  args: string[],
): Promise<HookResult | null> {
  const path = hookPath(repo, name);
  if (path === undefined) return null;
  const env = gitChildEnv(repo, start);
  return new Promise((done) => {
    const child = spawn(forChild(path, repo.worktree), args, {
      cwd: repo.worktree,
      env,
      stdio: ['ignore', 2, 2],
    });
    child.on('error', () => done({ name, status: 127 }));
    child.on('exit', (code, signal) => {
      done({ name, status: code ?? 128 + (signal ? osConstants.signals[signal] : 0) });
    });
  });
}
