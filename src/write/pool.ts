import { join } from 'node:path';
import type { Piscina } from 'piscina';
import type { NativeWriteRequest, NativeWriteResult } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { PACKAGE_ROOT } from '../package-root.js';
import type { ObjectStore, WorkerConstants, WorkerResult, WorkerTask } from './worker.js';

/** The worker as tsc wrote it (the pool may be started from a bundle in dist/). */
const WORKER = join(PACKAGE_ROOT, 'dist', 'write', 'worker.js');

/** The pool as one checkout sees it: writes go to one repository's objects. */
export interface PoolWriter {
  readonly threads: number;
  write(request: NativeWriteRequest): Promise<NativeWriteResult>;
}

/**
 * The Piscina pool, started when the files to write are above the threshold: once per
 * checkout, or once per warm engine (its threads keep a reader per repository).
 * A worker that cannot start (no memory, no file descriptors left) fails the checkout with
 * ERR_WORKER; it never reaches the process as an unhandled 'error' event.
 */
export class WorkerPool {
  private failure: unknown;
  private destroyed: Promise<void> | undefined;

  private constructor(
    readonly threads: number,
    private readonly pool: Piscina<WorkerTask, WorkerResult>,
  ) {
    // Piscina reports a worker that dies with no task (e.g. during its start) as an 'error'
    // event; unheard, it would end the process. The first one fails the pool: the tasks in
    // flight are rejected and the caller gets the reason.
    pool.on('error', (err: unknown) => this.fail(err));
  }

  /** Piscina is loaded here, on first use: a checkout below the threshold never pays for it. */
  static async start(threads: number, constants: WorkerConstants): Promise<WorkerPool> {
    const { Piscina } = await import('piscina');
    const pool = new Piscina<WorkerTask, WorkerResult>({
      filename: WORKER,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      workerData: constants,
    });
    return new WorkerPool(threads, pool);
  }

  /** Writes against `store`'s objects. */
  writer(store: ObjectStore): PoolWriter {
    return { threads: this.threads, write: async (request) => this.write(store, request) };
  }

  private async write(store: ObjectStore, request: NativeWriteRequest): Promise<NativeWriteResult> {
    if (this.failure !== undefined) throw poolError(this.failure);
    let result: WorkerResult;
    try {
      result = await this.pool.run({ store, request });
    } catch (err) {
      throw poolError(this.failure ?? err);
    }
    // A coded error the worker caught (the addon's, e.g. the root vanished): rebuilt here.
    if ('failure' in result) throw fromNative(result.failure, 'writing files failed');
    return result;
  }

  private fail(err: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = err;
    void this.destroy();
  }

  async destroy(): Promise<void> {
    this.destroyed ??= this.pool.destroy().catch(() => {});
    return this.destroyed;
  }
}

function poolError(err: unknown): PcheckoutError {
  const message = String((err as Error)?.message ?? err);
  const hint = /EMFILE|ENFILE|too many open files/i.test(message)
    ? ' (out of file descriptors: raise the limit, ulimit -n, or use fewer workers)'
    : /EAGAIN|ENOMEM|Resource temporarily unavailable/i.test(message)
      ? ' (out of threads or memory: use fewer workers)'
      : '';
  return new PcheckoutError('ERR_WORKER', `a checkout worker failed: ${message}${hint}`, {
    cause: err,
  });
}
