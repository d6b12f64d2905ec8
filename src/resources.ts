/**
 * What may outlive one checkout: the worker pool and the object readers. A one-shot checkout
 * opens them and closes them when it ends; a warm engine (engine.ts) keeps them across calls,
 * so a build system that checks out many trees starts threads and maps packs once.
 */
import { statSync } from 'node:fs';
import { loadAddon, type NativeOdb } from './addon.js';
import { fromNative } from './errors.js';
import { WorkerPool, type PoolWriter } from './write/pool.js';
import type { ObjectStore } from './write/worker.js';

/** Delta bases cached by all the readers of a checkout together, split between them. */
export const CACHE_BUDGET = 64 * 1024 * 1024;
const MIN_READER_CACHE = 4 * 1024 * 1024;

/** A repository's objects as this process reads them: its reader and the id workers know it by. */
export interface Store extends ObjectStore {
  odb: NativeOdb;
}

/** The pool as a checkout asks for it: started on first use, then shared. */
export interface PoolHandle {
  /** The running pool's threads, or 0 when it was never started. */
  readonly started: number;
  get(store: ObjectStore): Promise<PoolWriter>;
}

class LazyPool {
  private pool: WorkerPool | null = null;
  private starting: Promise<WorkerPool> | null = null;

  constructor(private readonly threads: number) {}

  get started(): number {
    return this.pool?.threads ?? 0;
  }

  /** Starts the threads now (their start-up overlaps whatever the caller does next). */
  start(): Promise<WorkerPool> {
    this.starting ??= WorkerPool.start(this.threads, {
      cacheBytes: Math.max(MIN_READER_CACHE, Math.floor(CACHE_BUDGET / (this.threads + 1))),
    }).then((pool) => (this.pool = pool));
    return this.starting;
  }

  async destroy(): Promise<void> {
    await (this.starting ?? Promise.resolve(null)).then(
      (pool) => pool?.destroy(),
      () => {},
    );
  }
}

/** Where packs live: a repack changes these directories, and then the readers are renewed. */
function packSignature(objectDirs: string[]): string {
  return objectDirs
    .map((dir) => {
      const st = statSync(`${dir}/pack`, { bigint: true, throwIfNoEntry: false });
      return st ? `${dir}:${st.ino}:${st.mtimeNs}` : `${dir}:-`;
    })
    .join('\0');
}

export class Resources {
  private readonly pools = new Map<number, LazyPool>();
  private readonly stores = new Map<string, Store & { signature: string }>();
  private nextId = 1;
  private closed = false;

  /** The pool of `threads` workers (one per distinct count asked for). */
  pool(threads: number): PoolHandle {
    let lazy = this.pools.get(threads);
    if (!lazy) {
      lazy = new LazyPool(threads);
      this.pools.set(threads, lazy);
    }
    const pool = lazy;
    return {
      get started() {
        return pool.started;
      },
      get: async (store) => (await pool.start()).writer(store),
    };
  }

  /** The reader of a repository's objects, reopened when its packs changed since last time. */
  store(objectDirs: string[], threads: number): Store {
    const key = objectDirs.join('\0');
    const signature = packSignature(objectDirs);
    const known = this.stores.get(key);
    if (known && known.signature === signature) return known;
    known?.odb.close();
    let odb: NativeOdb;
    try {
      const cache = Math.max(MIN_READER_CACHE, Math.floor(CACHE_BUDGET / (threads + 1)));
      odb = new (loadAddon().Odb)(objectDirs, cache);
    } catch (err) {
      throw fromNative(err, 'cannot open the object database');
    }
    const store = { id: this.nextId++, objectDirs, odb, signature };
    this.stores.set(key, store);
    return store;
  }

  /** Between checkouts: caches are dropped, readers and threads stay. */
  idle(): void {
    for (const store of this.stores.values()) store.odb.releaseCache();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const store of this.stores.values()) store.odb.close();
    this.stores.clear();
    await Promise.all([...this.pools.values()].map((p) => p.destroy()));
    this.pools.clear();
  }
}
