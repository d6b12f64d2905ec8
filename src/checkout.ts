/**
 * The API: checkout() and materialize() validate their options here, then run the whole call
 * on an orchestrator thread (call/), so the caller's event loop never waits on a phase. Calls on
 * different worktrees run at once; calls on one worktree queue. The CLI runs calls on its own
 * thread (`inThisThread`).
 */
import { resolve } from 'node:path';
import { runHere } from './call/here.js';
import { routeOf, type RepoPath } from './repo/byte-path.js';
import { CallPool, defaultThreads } from './call/threads.js';
import type { JobRequest } from './run/job.js';
import type { CheckoutSummary } from './run/summary.js';
import {
  validate,
  validateMaterialize,
  type CheckoutOptions,
  type MaterializeOptions,
  type Settings,
} from './settings.js';
export type { CheckoutSummary, Stops } from './run/summary.js';
export type { Changes } from './run/changes.js';
export type { Progress, Phase } from './run/control.js';
export type { Mode } from './plan/plan.js';
export type { FsyncMode, FsyncSummary } from './write/durability.js';
export type { FilesystemInfo } from './write/filesystem.js';
export type { CheckoutOptions, MaterializeOptions, StoreOption } from './settings.js';
export type { StoreSummary } from './write/store.js';

/** An orchestrator thread idle this long is stopped (an idle one does not keep the process alive). */
const IDLE_MS = 5000;
let shared: CallPool | null = null;

/** The process's pool for plain calls: readers opened per call, threads made on demand. */
function plainPool(): CallPool {
  shared ??= new CallPool({
    setup: { keep: false, watch: false },
    max: defaultThreads(),
    idleMs: IDLE_MS,
  });
  return shared;
}

/** Settings as they cross to a thread: the functions and the signal stay with the caller. */
export function portable(settings: Settings): Settings {
  return { ...settings, onProgress: undefined, signal: undefined };
}

export function checkoutRequest(
  repoPath: RepoPath,
  options: CheckoutOptions,
): {
  request: JobRequest;
  settings: Settings;
} {
  const settings = validate(repoPath, options);
  return { request: { kind: 'checkout', repoPath, settings: portable(settings) }, settings };
}

export function materializeRequest(
  repoPath: RepoPath,
  targetDir: string,
  options: MaterializeOptions,
): { request: JobRequest; settings: Settings } {
  const settings = validateMaterialize(repoPath, targetDir, options);
  return {
    request: { kind: 'materialize', repoPath, targetDir, settings: portable(settings) },
    settings,
  };
}

/**
 * Checks out a revision into a repository's worktree and writes its index — a fresh checkout,
 * a switch, a forced checkout, a restore from the index, or pathspecs: the API behind
 * `pcheckout`. (A build system checking out many trees: createEngine keeps threads warm.)
 */
export async function checkout(
  repoPath: RepoPath,
  options: CheckoutOptions = {},
): Promise<CheckoutSummary> {
  const { request, settings } = checkoutRequest(repoPath, options);
  return plainPool().call(request, {
    onProgress: settings.onProgress,
    signal: settings.signal,
    route: routeOf(repoPath),
  });
}

/**
 * Writes a revision's tree (a commit, a tree, part of it with `paths`) into any directory
 * outside the repository, without touching the repository; a later call into the same
 * directory writes only the difference. What is there is recorded in `<targetDir>/.git/index`.
 */
export async function materialize(
  repoPath: RepoPath,
  targetDir: string,
  options: MaterializeOptions = {},
): Promise<CheckoutSummary> {
  const { request, settings } = materializeRequest(repoPath, targetDir, options);
  return plainPool().call(request, {
    onProgress: settings.onProgress,
    signal: settings.signal,
    route: resolve(targetDir),
  });
}

/**
 * The same calls on the calling thread: the CLI's way, and a host's that already runs them on
 * a thread of its own (no second hop). That thread's event loop waits while a phase runs.
 */
export const inThisThread = {
  checkout: async (repoPath: RepoPath, options: CheckoutOptions = {}): Promise<CheckoutSummary> => {
    const { request, settings } = checkoutRequest(repoPath, options);
    return runHere(request, settings.onProgress, settings.signal);
  },
  materialize: async (
    repoPath: RepoPath,
    targetDir: string,
    options: MaterializeOptions = {},
  ): Promise<CheckoutSummary> => {
    const { request, settings } = materializeRequest(repoPath, targetDir, options);
    return runHere(request, settings.onProgress, settings.signal);
  },
};
