/**
 * A warm engine for callers that check out many trees (build systems): the worker pool, the
 * addon and each repository's opened packs are kept between calls, so only the first call pays
 * for starting threads and mapping packs.
 *
 *   const engine = createEngine({ workers: 4 });
 *   await engine.materialize(repo, dir, { ref: 'v1.2' });
 *   await engine.checkout(repo, { ref: 'main' });
 *   await engine.close();
 *
 * Every call runs on one of the engine's orchestrator threads (call/), never on the caller's.
 * Calls on different worktrees or targets run at once; calls on one worktree queue, each
 * waiting for the one before it, as two checkouts of one worktree must. A repository's calls
 * go back to the thread that has its packs open and its worktree watched.
 */
import { resolve } from 'node:path';
import { checkoutRequest, materializeRequest } from './checkout.js';
import { CallPool, defaultThreads } from './call/threads.js';
import { routeOf, type RepoPath } from './repo/byte-path.js';
import type { CheckoutSummary } from './run/summary.js';
import { PcheckoutError } from './errors.js';
import { MAX_WORKERS } from './options.js';
import {
  storeOption,
  type CheckoutOptions,
  type MaterializeOptions,
  type StoreOption,
} from './settings.js';

export interface EngineOptions {
  /**
   * Worker threads for calls that do not say (0 = one per core). Default: as for checkout(),
   * `checkout.workers` of each repository, else one per core.
   */
  workers?: number;
  /**
   * Watch each worktree between calls (inotify, on local filesystems), so that a restore or a
   * forced checkout looks only at what changed since the previous call instead of lstat-ing
   * every tracked file (see "The worktree watch" in docs/api.md for what a watch cannot see). Default
   * true.
   */
  watch?: boolean;
  /** The store of worktree-ready files for calls that do not name one (the calls' `store` option). */
  store?: CheckoutOptions['store'];
}

export interface Engine {
  checkout(repoPath: RepoPath, options?: CheckoutOptions): Promise<CheckoutSummary>;
  materialize(
    repoPath: RepoPath,
    targetDir: string,
    options?: MaterializeOptions,
  ): Promise<CheckoutSummary>;
  /** Waits for the calls in flight, stops the threads and unmaps the packs; later calls are refused. */
  close(): Promise<void>;
}

export function createEngine(options: EngineOptions = {}): Engine {
  const known = new Set(['workers', 'watch', 'store']);
  for (const key of Object.keys(options)) {
    if (!known.has(key))
      throw new PcheckoutError('ERR_INVALID_OPTION', `unknown engine option '${key}'`);
  }
  const { workers } = options;
  if (
    workers !== undefined &&
    (typeof workers !== 'number' ||
      !Number.isInteger(workers) ||
      workers < 0 ||
      workers > MAX_WORKERS)
  ) {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `engine option 'workers' must be an integer from 0 to ${MAX_WORKERS}`,
    );
  }
  if (options.watch !== undefined && typeof options.watch !== 'boolean') {
    throw new PcheckoutError('ERR_INVALID_OPTION', `engine option 'watch' must be a boolean`);
  }
  const pool = new CallPool({
    setup: { keep: true, watch: options.watch ?? true },
    max: defaultThreads(),
    idleMs: 0,
  });
  // The store checked now, a relative directory resolved against today's cwd.
  const resolved = storeOption(options.store);
  const store: StoreOption | undefined = resolved
    ? {
        dir: resolved.dir,
        link: resolved.link,
        ...(resolved.maxBytes !== null ? { maxBytes: resolved.maxBytes } : {}),
      }
    : undefined;
  const withDefaults = <T extends CheckoutOptions>(o: T): T => ({
    ...(workers !== undefined && o.workers === undefined ? { workers } : {}),
    ...(store !== undefined && o.store === undefined ? { store } : {}),
    ...o,
  });

  return {
    checkout: async (repoPath, opts = {}) => {
      const { request, settings } = checkoutRequest(repoPath, withDefaults(opts));
      return pool.call(request, {
        onProgress: settings.onProgress,
        signal: settings.signal,
        route: routeOf(repoPath),
      });
    },
    materialize: async (repoPath, targetDir, opts = {}) => {
      const { request, settings } = materializeRequest(repoPath, targetDir, withDefaults(opts));
      return pool.call(request, {
        onProgress: settings.onProgress,
        signal: settings.signal,
        route: resolve(targetDir),
      });
    },
    close: () => pool.close(),
  };
}
