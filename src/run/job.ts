/**
 * Phase 0, resolve: what one call works on — a repository's own worktree and index, or a
 * materialized directory — from the caller's validated settings. The worktree is claimed
 * (`claim`, by the path of its index) before anything in it is read or written: calls on one
 * worktree run one after another, calls on different ones at once.
 */
import { join } from 'node:path';
import { openStartPath, stableKey, type RepoPath } from '../repo/byte-path.js';
import { openRepo, type Repo } from '../repo/repo.js';
import { claimTarget, targetKey } from '../materialize-target.js';
import type { Settings } from '../settings.js';
import { openStore, type OpenStore } from '../write/store.js';

/** What one run works on: a repository's own worktree and index, or a materialized directory. */
export interface Job {
  settings: Settings;
  repo: Repo;
  /** Where the files go. */
  worktree: string;
  /** The index that records what is there (in .git, or in the target's metadata directory). */
  indexPath: string;
  /** A materialize: HEAD, refs and merge state are left alone; metadata is written. */
  materialize: boolean;
  /** The path the repository was opened from (GIT_PREFIX for hooks). */
  start: string;
  /** The call's store, its directory made (null: none named, or a dry run). */
  store: OpenStore | null;
}

/**
 * The call as the caller gave it (its settings validated). A repository path's bytes (a
 * Uint8Array) are for one that is not valid UTF-8 (repo/byte-path.ts).
 */
export type JobRequest =
  | { kind: 'checkout'; repoPath: RepoPath; settings: Settings }
  | {
      kind: 'materialize';
      repoPath: RepoPath;
      targetDir: string;
      settings: Settings;
    };

/** Waits until no other call of this process works on the worktree or target named by `key`. */
export type Claim = (key: string) => Promise<void>;

export const noClaim: Claim = async () => {};

/**
 * Runs `body` on the job `request` names: the repository opened, the worktree or target claimed
 * (dry runs claim nothing on disk), and what was held open to reach it released at the end.
 */
export async function withJob<T>(
  request: JobRequest,
  claim: Claim,
  body: (job: Job) => Promise<T>,
): Promise<T> {
  const start = openStartPath(request.repoPath);
  try {
    return await body(await openJob(request, start.path, claim));
  } catch (err) {
    throw start.relabel(err);
  } finally {
    start.close();
  }
}

async function openJob(request: JobRequest, repoPath: string, claim: Claim): Promise<Job> {
  const { settings } = request;
  // A materialize needs no worktree of the repository's: a bare one (a mirror) serves.
  const repo = openRepo(repoPath, process.env, { allowBare: request.kind === 'materialize' });
  // Before the target is made: a store that cannot be made stops the call with nothing written.
  const store = settings.store && !settings.dryRun ? openStore(settings.store) : null;
  if (request.kind === 'checkout') {
    const indexPath = join(repo.gitDir, 'index');
    await claim(stableKey(indexPath));
    return {
      settings,
      repo,
      worktree: repo.worktree,
      indexPath,
      materialize: false,
      start: repoPath,
      store,
    };
  }
  await claim(targetKey(request.targetDir));
  const { worktree, meta } = claimTarget(request.targetDir, repo, settings.force, settings.dryRun);
  return {
    settings,
    repo,
    worktree,
    indexPath: join(meta, 'index'),
    materialize: true,
    start: repoPath,
    store,
  };
}
