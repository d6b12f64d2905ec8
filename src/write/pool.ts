import { join } from 'node:path';
import type { Piscina } from 'piscina';
import type { NativeWriteRequest, NativeWriteResult } from '../addon.js';
import { PcheckoutError, fromNative, isErrorCode } from '../errors.js';
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
 */
export class WorkerPool {
  private constructor(
    readonly threads: number,
    private readonly pool: Piscina<WorkerTask, WorkerResult>,
  ) {}

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
    return { threads: this.threads, write: async (request) => this.run({ store, request }) };
  }

  private async run(task: WorkerTask): Promise<WorkerResult> {
    try {
      return await this.pool.run(task);
    } catch (err) {
      // Coded errors come from the addon (the root vanished, …); anything else is the pool's.
      if (isErrorCode((err as { code?: unknown })?.code)) throw fromNative(err, 'a worker failed');
      throw new PcheckoutError(
        'ERR_WORKER',
        `a checkout worker failed: ${(err as Error)?.message ?? err}`,
        { cause: err },
      );
    }
  }

  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
