import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PcheckoutError } from '../errors.js';
import type { Repo } from './repo.js';

function symrefIn(headFile: string): string | undefined {
  try {
    const m = /^ref:\s*(\S+)/.exec(readFileSync(headFile, 'utf8'));
    return m?.[1];
  } catch {
    return undefined;
  }
}

/** Every other worktree of the repository: its git directory and its top. */
function otherWorktrees(repo: Repo): { gitDir: string; path: string }[] {
  const out: { gitDir: string; path: string }[] = [];
  if (
    resolve(repo.gitDir) !== resolve(repo.commonDir) &&
    repo.config.getBool('core.bare') !== true
  ) {
    const common = resolve(repo.commonDir);
    out.push({ gitDir: common, path: common.endsWith('/.git') ? dirname(common) : common });
  }
  const dir = join(repo.commonDir, 'worktrees');
  let ids: string[] = [];
  try {
    ids = readdirSync(dir);
  } catch {
    return out;
  }
  for (const id of ids.sort()) {
    const gitDir = join(dir, id);
    if (resolve(gitDir) === resolve(repo.gitDir)) continue;
    let path: string;
    try {
      path = readFileSync(join(gitDir, 'gitdir'), 'utf8').trim();
    } catch {
      continue; // not a worktree's directory
    }
    out.push({ gitDir, path: path.endsWith('/.git') ? path.slice(0, -5) : path });
  }
  return out;
}

/**
 * Refuses to check out a branch that another worktree has checked out, as git does (its
 * die_if_checked_out): two worktrees on one branch would each see the other's commits as
 * changes.
 */
export function assertNotCheckedOutElsewhere(repo: Repo, branch: string): void {
  for (const wt of otherWorktrees(repo)) {
    if (symrefIn(join(wt.gitDir, 'HEAD')) === branch) {
      throw new PcheckoutError(
        'ERR_BRANCH_CHECKED_OUT',
        `'${branch.replace(/^refs\/heads\//, '')}' is already checked out at '${wt.path}'`,
        { path: wt.path },
      );
    }
  }
}
