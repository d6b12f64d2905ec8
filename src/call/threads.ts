/**
 * The caller's side of the orchestrator threads (call/worker.ts): a pool of them, each running
 * whole calls one at a time, so that nothing heavy runs on the caller's thread and calls on
 * different worktrees run at once. Calls on one worktree (or materialize target) queue: each
 * claims its worktree, by the path of its index, before it reads or writes anything there.
 *
 * A pool either opens readers per call (the plain API: any idle thread serves) or keeps them
 * with each thread's watches (a warm engine: a repository's calls go back to the thread that
 * has its packs open and its worktree watched).
 */
import { availableParallelism } from 'node:os';
import { unlinkSync } from 'node:fs';
import { SHARE_ENV, Worker } from 'node:worker_threads';
import { holdCallerSlice } from './caller-slice.js';
import { PcheckoutError, callbackFailure, isErrorCode } from '../errors.js';
import { abortedError, type Progress } from '../run/control.js';
import type { JobRequest } from '../run/job.js';
import type { CheckoutSummary } from '../run/summary.js';
import type { Changes } from '../run/changes.js';
import type {
  CallTask,
  FromThread,
  SentCause,
  SentChanges,
  SentError,
  SentSummary,
  ThreadSetup,
  ToThread,
} from './worker.js';

/** The orchestrator thread's script: the package's bundle itself, this module's file (src/lib.ts). */
const WORKER_URL = new URL('./lib.cjs', import.meta.url);
const HEARTBEAT_MS = 100;

// --- Worktree claims, for every pool of this process --------------------------------------

const claims = new Map<string, Promise<void>>();

/** Waits until `key` is free, then holds it until the returned function is called. */
async function claimKey(key: string): Promise<() => void> {
  const before = claims.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const chained = before.then(() => mine);
  claims.set(key, chained);
  await before;
  return () => {
    release();
    if (claims.get(key) === chained) claims.delete(key);
  };
}

// --- Locks the threads hold: removed if this process exits mid-call ----------------------

const threadLocks = new Set<string>();
let exitHook = false;

function trackLock(path: string, held: boolean): void {
  if (!held) {
    threadLocks.delete(path);
    return;
  }
  threadLocks.add(path);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const p of threadLocks) {
      try {
        unlinkSync(p);
      } catch {
        /* already gone */
      }
    }
  });
}

// --- Errors back from a thread -----------------------------------------------------------

function receiveCause(c: SentCause | undefined): unknown {
  if (c === undefined) return undefined;
  const err = new Error(c.message);
  err.name = c.name;
  Object.assign(err, c.props);
  return err;
}

function receiveError(e: SentError): Error {
  if (e.pcheckout && isErrorCode(e.code)) {
    const err = new PcheckoutError(e.code, e.message, {
      ...(e.details as object),
      ...(e.cause !== undefined ? { cause: receiveCause(e.cause) } : {}),
    });
    // Where it was thrown, then where it was awaited.
    if (e.stack) err.stack = `${e.stack}\n    at (the orchestrator thread)\n${err.stack ?? ''}`;
    return err;
  }
  const err = new PcheckoutError('ERR_INTERNAL', `internal error: ${e.message}`);
  if (e.stack) err.stack = e.stack;
  return err;
}

// --- One call --------------------------------------------------------------------------

export interface CallOptions {
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  /**
   * The worktree or target as given, resolved: calls of one route run in the order they were
   * made (on one thread); a pool that keeps readers sends a route back to its thread.
   */
  route: string;
}

interface Pending {
  task: CallTask;
  options: CallOptions;
  resolve: (s: CheckoutSummary) => void;
  reject: (e: unknown) => void;
  release: (() => void) | null;
  /** Given its worktree: from here it may take locks and write, and must finish itself. */
  granted: boolean;
  callbackError: unknown;
  settled: boolean;
  cleanup: () => void;
  /** The last progress delivered, and when (the heartbeat repeats it). */
  last: Progress | undefined;
  lastAt: number;
}

/** A summary as the thread sent it (worker.ts, sendSummary), its changes decoded when read. */
function receiveSummary(sent: SentSummary): CheckoutSummary {
  return { ...sent, changes: sent.changes === null ? null : lazyChanges(sent.changes) };
}

/**
 * The three lists of a sent `changes`, decoded from its buffer on first read of any of them
 * (13 ms for 78,635 paths), so that a caller that does not read them never pays for them.
 */
function lazyChanges(sent: SentChanges): Changes {
  let lists: Changes | null = null;
  const decode = (): Changes => {
    if (lists !== null) return lists;
    const all = Buffer.from(sent.bytes).toString('utf8').split('\0');
    const { created, updated, deleted } = sent;
    lists = {
      created: all.slice(0, created),
      updated: all.slice(created, created + updated),
      deleted: all.slice(created + updated, created + updated + deleted),
    };
    return lists;
  };
  const out = {} as Changes;
  for (const key of ['created', 'updated', 'deleted'] as const) {
    Object.defineProperty(out, key, {
      enumerable: true,
      configurable: true,
      get: () => decode()[key],
      set: (v: string[]) =>
        Object.defineProperty(out, key, { value: v, enumerable: true, writable: true }),
    });
  }
  return out;
}

class CallThread {
  readonly worker: Worker;
  readonly calls = new Map<number, Pending>();
  /** Routes served last (a warm engine's repositories and targets). */
  readonly routes = new Set<string>();
  private closing: Promise<void> | null = null;
  private closed!: () => void;
  idleSince = Date.now();

  constructor(
    setup: ThreadSetup,
    private readonly onExit: (t: CallThread) => void,
  ) {
    this.worker = new Worker(WORKER_URL, {
      env: SHARE_ENV,
      // None of the caller's node flags: those of its entry script (--input-type, -e) stop a
      // thread from starting, and V8's (--expose-gc) are the process's already.
      execArgv: [],
      workerData: { pcheckoutCall: setup },
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    this.worker.on('message', (msg: FromThread) => this.receive(msg));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      this.fail(new Error(`the orchestrator thread exited (${code})`));
      this.closed?.();
      this.onExit(this);
    });
  }

  get load(): number {
    return this.calls.size;
  }

  /** Whether a call of this route is queued or running here. */
  serving(route: string): boolean {
    for (const p of this.calls.values()) if (p.options.route === route) return true;
    return false;
  }

  submit(p: Pending): void {
    if (this.calls.size === 0) this.worker.ref();
    this.calls.set(p.task.id, p);
    this.send({ type: 'run', task: p.task });
  }

  send(msg: ToThread): void {
    this.worker.postMessage(msg);
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.closed = resolve;
      this.worker.ref();
      this.send({ type: 'close' });
    });
    return this.closing;
  }

  private settle(p: Pending, ok: boolean, value: unknown): void {
    if (p.settled) return;
    p.settled = true;
    this.calls.delete(p.task.id);
    p.release?.();
    p.cleanup();
    if (this.calls.size === 0) {
      this.idleSince = Date.now();
      if (this.closing === null) this.worker.unref();
    }
    if (ok) p.resolve(value as CheckoutSummary);
    else p.reject(value);
  }

  private receive(msg: FromThread): void {
    if (msg.type === 'lock') return trackLock(msg.path, msg.held);
    if (msg.type === 'closed') {
      void this.worker.terminate();
      return;
    }
    const p = this.calls.get(msg.id);
    if (p === undefined) {
      // A call settled before it was given its worktree (aborted while it waited): it stops.
      if (msg.type === 'claim') this.send({ type: 'abort', id: msg.id });
      return;
    }
    switch (msg.type) {
      case 'progress':
        deliver(p, msg.progress, this);
        break;
      case 'claim':
        void claimKey(msg.key).then((release) => {
          if (p.settled) return release();
          p.release = release;
          p.granted = true;
          this.send({ type: 'granted', id: p.task.id });
        });
        break;
      case 'done':
        if (p.callbackError !== undefined) this.settle(p, false, callbackFailure(p.callbackError));
        else this.settle(p, true, receiveSummary(msg.summary));
        break;
      case 'failed': {
        const err = receiveError(msg.error);
        if (p.callbackError !== undefined) this.settle(p, false, callbackFailure(p.callbackError));
        else if (
          err instanceof PcheckoutError &&
          err.code === 'ERR_ABORTED' &&
          p.options.signal?.aborted
        )
          // The caller's reason, as the caller gave it.
          this.settle(p, false, rewordAbort(err, p.options.signal.reason));
        else this.settle(p, false, err);
        break;
      }
    }
  }

  private fail(err: unknown): void {
    for (const p of [...this.calls.values()]) this.settle(p, false, threadFailure(err, 'stopped'));
  }

  /** Asks the thread to stop a call (the flag first: it is read inside synchronous steps). */
  abort(p: Pending): void {
    Atomics.store(new Int32Array(p.task.flag), 0, 1);
    this.send({ type: 'abort', id: p.task.id });
    // Not yet given its worktree, the call has touched nothing: it ends now (the thread drops
    // it when it gets there), not once a thread still starting up has read the message.
    if (!p.granted) {
      const signal = p.options.signal;
      this.settle(
        p,
        false,
        p.callbackError !== undefined
          ? callbackFailure(p.callbackError)
          : abortedError(signal?.aborted ? signal.reason : undefined),
      );
    }
  }
}

/**
 * A thread that could not start, or stopped: for want of descriptors or memory that is the
 * system's limit (as a writer thread's would be), ERR_IO with what to do; else a bug.
 */
function threadFailure(err: unknown, what: 'start' | 'stopped'): PcheckoutError {
  const text = String((err as Error)?.message ?? err);
  if (/EMFILE|ENFILE|ENOMEM|EAGAIN/.test(text)) {
    return new PcheckoutError(
      'ERR_IO',
      `cannot start an orchestrator thread: ${text} (raise the limit: ulimit -n)`,
      { cause: err },
    );
  }
  return new PcheckoutError(
    'ERR_INTERNAL',
    what === 'start'
      ? `cannot start an orchestrator thread: ${text}`
      : `the orchestrator thread stopped: ${text}`,
    { cause: err },
  );
}

/** An abort's error, with the caller's reason and how far the call got (if it had begun). */
function rewordAbort(err: PcheckoutError, reason: unknown): PcheckoutError {
  const plain = abortedError(reason);
  const rest = err.message.startsWith('the checkout was aborted')
    ? err.message.slice(
        err.message.indexOf('\n') >= 0 ? err.message.indexOf('\n') : err.message.length,
      )
    : '';
  return new PcheckoutError('ERR_ABORTED', plain.message + rest, {
    ...(err.path !== undefined ? { path: err.path } : {}),
    ...(err.written !== undefined ? { written: err.written } : {}),
    cause: reason,
  });
}

function deliver(p: Pending, progress: Progress, thread: CallThread): void {
  if (p.callbackError !== undefined || p.options.onProgress === undefined) return;
  p.last = progress;
  p.lastAt = performance.now();
  try {
    p.options.onProgress(progress);
  } catch (err) {
    p.callbackError = err;
    thread.abort(p);
  }
}

// --- The pool ----------------------------------------------------------------------------

export interface PoolOptions {
  setup: ThreadSetup;
  /** Threads at most. */
  max: number;
  /** A thread idle this long is stopped (0: kept until close). */
  idleMs: number;
}

let nextId = 1;

export class CallPool {
  private readonly threads: CallThread[] = [];
  private reaper: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: PoolOptions) {}

  /** Runs one call on a thread of the pool. */
  call(request: JobRequest, options: CallOptions): Promise<CheckoutSummary> {
    if (this.closed) {
      return Promise.reject(new PcheckoutError('ERR_INVALID_OPTION', 'the engine is closed'));
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortedError(signal.reason));
    const release = holdCallerSlice();
    return new Promise<CheckoutSummary>((resolveCall, rejectCall) => {
      const resolve = (s: CheckoutSummary): void => {
        release();
        resolveCall(s);
      };
      const reject = (e: unknown): void => {
        release();
        rejectCall(e);
      };
      let thread: CallThread;
      try {
        thread = this.pick(options.route);
      } catch (err) {
        reject(threadFailure(err, 'start'));
        return;
      }
      const task: CallTask = {
        id: nextId++,
        request,
        progress: options.onProgress !== undefined,
        flag: new SharedArrayBuffer(4),
      };
      const pending: Pending = {
        task,
        options,
        resolve,
        reject,
        release: null,
        granted: false,
        callbackError: undefined,
        settled: false,
        cleanup: () => {},
        last: undefined,
        lastAt: 0,
      };
      const onAbort = (): void => thread.abort(pending);
      signal?.addEventListener('abort', onAbort, { once: true });
      // A bar must not sit still: the last progress again when a phase gives none for a while.
      const beat =
        options.onProgress === undefined
          ? null
          : setInterval(() => {
              const { last, lastAt } = pending;
              if (last !== undefined && performance.now() - lastAt >= HEARTBEAT_MS)
                deliver(pending, last, thread);
            }, HEARTBEAT_MS).unref();
      pending.cleanup = () => {
        signal?.removeEventListener('abort', onAbort);
        if (beat) clearInterval(beat);
      };
      thread.routes.add(options.route);
      thread.submit(pending);
    });
  }

  /** The thread for a call: the route's own (kept readers), else an idle one, else a new one. */
  private pick(route: string): CallThread {
    const live = this.threads;
    // Calls on one worktree keep their order: behind the one in flight, on its thread.
    const busy = live.find((t) => t.serving(route));
    if (busy) return busy;
    if (this.options.setup.keep) {
      const own = live.find((t) => t.routes.has(route));
      if (own) return own;
    }
    const idle = live.filter((t) => t.load === 0);
    if (idle.length > 0) {
      // Prefer a thread that serves no route yet, then the one with the fewest.
      idle.sort((a, b) => a.routes.size - b.routes.size);
      return idle[0]!;
    }
    if (live.length < this.options.max) return this.spawn();
    return live.reduce((a, b) => (b.load < a.load ? b : a));
  }

  private spawn(): CallThread {
    const t = new CallThread(this.options.setup, (gone) => {
      const at = this.threads.indexOf(gone);
      if (at >= 0) this.threads.splice(at, 1);
    });
    this.threads.push(t);
    if (this.options.idleMs > 0 && this.reaper === null) {
      this.reaper = setInterval(() => this.reap(), this.options.idleMs).unref();
    }
    return t;
  }

  private reap(): void {
    const now = Date.now();
    for (const t of [...this.threads]) {
      if (t.load !== 0 || now - t.idleSince < this.options.idleMs) continue;
      // Out of the pool first: a thread told to close takes no more calls (one sent after its
      // `close` would never run).
      this.threads.splice(this.threads.indexOf(t), 1);
      void t.close();
    }
    if (this.threads.length === 0 && this.reaper) {
      clearInterval(this.reaper);
      this.reaper = null;
    }
  }

  /** Waits for the calls in flight, then stops every thread (each closes its readers first). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.reaper) clearInterval(this.reaper);
    this.reaper = null;
    await Promise.all([...this.threads].map((t) => t.close()));
  }
}

/** Orchestrator threads for a pool that does not say: one per core, at least two. */
export function defaultThreads(): number {
  return Math.max(2, availableParallelism());
}
