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
 * Calls on one engine run one after another (each waits for the previous one to end), as two
 * checkouts of one worktree must anyway.
 */
import { checkoutJob, materializeJob, run, type CheckoutSummary, type Job } from './checkout.js';
import { PcheckoutError } from './errors.js';
import { Resources } from './resources.js';
import type { CheckoutOptions, MaterializeOptions } from './settings.js';

export interface EngineOptions {
  /**
   * Worker threads for calls that do not say (0 = one per core). Default: as for checkout(),
   * `checkout.workers` of each repository, else one per core.
   */
  workers?: number;
  /**
   * Watch each worktree between calls (inotify, on local filesystems), so that a restore or a
   * forced checkout looks only at what changed since the previous call instead of lstat-ing
   * every tracked file (see "Warm engine" in the README for what a watch cannot see). Default
   * true.
   */
  watch?: boolean;
}

export interface Engine {
  checkout(repoPath: string, options?: CheckoutOptions): Promise<CheckoutSummary>;
  materialize(
    repoPath: string,
    targetDir: string,
    options?: MaterializeOptions,
  ): Promise<CheckoutSummary>;
  /** Stops the threads and unmaps the packs; later calls are refused. */
  close(): Promise<void>;
}

export function createEngine(options: EngineOptions = {}): Engine {
  const known = new Set(['workers', 'watch']);
  for (const key of Object.keys(options)) {
    if (!known.has(key))
      throw new PcheckoutError('ERR_INVALID_OPTION', `unknown engine option '${key}'`);
  }
  const { workers } = options;
  if (
    workers !== undefined &&
    (typeof workers !== 'number' || !Number.isInteger(workers) || workers < 0 || workers > 1024)
  ) {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `engine option 'workers' must be an integer from 0 to 1024`,
    );
  }
  if (options.watch !== undefined && typeof options.watch !== 'boolean') {
    throw new PcheckoutError('ERR_INVALID_OPTION', `engine option 'watch' must be a boolean`);
  }
  const resources = new Resources({ watch: options.watch ?? true });
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  const submit = (job: () => Job): Promise<CheckoutSummary> => {
    if (closed)
      return Promise.reject(new PcheckoutError('ERR_INVALID_OPTION', 'the engine is closed'));
    const result = queue.then(() => run(job(), resources));
    queue = result.catch(() => {});
    return result;
  };
  const withWorkers = <T extends { workers?: number }>(o: T): T =>
    workers === undefined || o.workers !== undefined ? o : { ...o, workers };

  return {
    checkout: (repoPath, opts = {}) => submit(() => checkoutJob(repoPath, withWorkers(opts))),
    materialize: (repoPath, targetDir, opts = {}) =>
      submit(() => materializeJob(repoPath, targetDir, withWorkers(opts))),
    close: async () => {
      closed = true;
      await queue;
      await resources.close();
    },
  };
}
