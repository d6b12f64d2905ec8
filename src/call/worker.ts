/**
 * An orchestrator thread: runs whole calls (every phase of run/run.ts) off the caller's thread,
 * one at a time, with the native writer threads beneath it. This module owns the task shape and
 * the messages both sides exchange; call/threads.ts is the caller's side.
 *
 * What cannot cross a thread travels as data: the caller's AbortSignal becomes a flag in shared
 * memory (read by every phase's checks, so an abort lands even inside a long synchronous step)
 * plus an `abort` message (which wakes the writers); onProgress becomes `progress` messages;
 * errors come back as their fields, so codes survive the hop.
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PcheckoutError } from '../errors.js';
import { setLockObserver } from '../lock.js';
import { Resources } from '../resources.js';
import { Control, abortedError, type Progress } from '../run/control.js';
import { withJob, type JobRequest } from '../run/job.js';
import { run } from '../run/run.js';
import type { CheckoutSummary } from '../run/summary.js';

/** How a thread keeps what outlives a call (set once, when the thread starts). */
export interface ThreadSetup {
  /** A warm engine's: readers and watches kept between calls (else opened per call). */
  keep: boolean;
  /** Watch worktrees between calls (a warm engine's `watch`). */
  watch: boolean;
}

export interface CallTask {
  id: number;
  request: JobRequest;
  /** Whether the caller listens to progress. */
  progress: boolean;
  /** Int32 slot 0: nonzero once the caller aborts. */
  flag: SharedArrayBuffer;
}

/**
 * A summary as it crosses the thread: `changes` (78,635 paths for a fresh Linux checkout) as
 * one buffer that is moved, not copied — the three lists' paths in order, each ended by a NUL,
 * UTF-8 — and how many each list has. Cloned as arrays of strings they cost the caller's thread
 * 35-60 ms to receive; the caller decodes them when it first reads them (threads.ts).
 */
export type SentSummary = Omit<CheckoutSummary, 'changes'> & { changes: SentChanges | null };

export interface SentChanges {
  bytes: ArrayBuffer;
  created: number;
  updated: number;
  deleted: number;
}

/** The summary to post, and what the post moves instead of copying. */
export function sendSummary(summary: CheckoutSummary): {
  sent: SentSummary;
  transfer: ArrayBuffer[];
} {
  const { changes } = summary;
  if (changes === null) return { sent: { ...summary, changes: null }, transfer: [] };
  const lists = [changes.created, changes.updated, changes.deleted];
  const text = lists.map((l) => l.map((p) => `${p}\0`).join('')).join('');
  // Encoded into a buffer of its own (small Buffers share Node's pool, which cannot be moved).
  const bytes = new ArrayBuffer(Buffer.byteLength(text, 'utf8'));
  Buffer.from(bytes).write(text, 'utf8');
  const sent: SentChanges = {
    bytes,
    created: changes.created.length,
    updated: changes.updated.length,
    deleted: changes.deleted.length,
  };
  return { sent: { ...summary, changes: sent }, transfer: [bytes] };
}

/** An error's fields, as they cross the thread. */
export interface SentError {
  pcheckout: boolean;
  name: string;
  code: string | undefined;
  message: string;
  stack: string | undefined;
  details: Record<string, unknown>;
  cause: SentCause | undefined;
}

/** A cause reduced to what identifies it (a Node fs error's code, syscall and path). */
export interface SentCause {
  name: string;
  message: string;
  props: Record<string, string | number>;
}

export type ToThread =
  | { type: 'run'; task: CallTask }
  | { type: 'granted'; id: number }
  | { type: 'abort'; id: number }
  | { type: 'close' };

export type FromThread =
  | { type: 'progress'; id: number; progress: Progress }
  | { type: 'claim'; id: number; key: string }
  | { type: 'lock'; path: string; held: boolean }
  | { type: 'done'; id: number; summary: SentSummary }
  | { type: 'failed'; id: number; error: SentError }
  | { type: 'closed' };

function sendCause(cause: unknown): SentCause | undefined {
  if (cause === undefined || cause === null) return undefined;
  if (typeof cause !== 'object') return { name: 'Error', message: String(cause), props: {} };
  const c = cause as Record<string, unknown>;
  const props: Record<string, string | number> = {};
  for (const k of ['code', 'errno', 'syscall', 'path', 'status']) {
    const v = c[k];
    if (typeof v === 'string' || typeof v === 'number') props[k] = v;
  }
  return { name: String(c['name'] ?? 'Error'), message: String(c['message'] ?? cause), props };
}

export function sendError(err: unknown): SentError {
  if (err instanceof PcheckoutError) {
    const details: Record<string, unknown> = {};
    for (const k of ['path', 'oid', 'paths', 'written', 'overwrite'] as const) {
      if (err[k] !== undefined) details[k] = err[k];
    }
    return {
      pcheckout: true,
      name: err.name,
      code: err.code,
      message: err.message,
      stack: err.stack,
      details,
      cause: sendCause(err.cause),
    };
  }
  const e = err as { name?: unknown; message?: unknown; stack?: unknown };
  return {
    pcheckout: false,
    name: typeof e?.name === 'string' ? e.name : 'Error',
    code: undefined,
    message: typeof e?.message === 'string' ? e.message : String(err),
    stack: typeof e?.stack === 'string' ? e.stack : undefined,
    details: {},
    cause: undefined,
  };
}

function serve(port: MessagePort, setup: ThreadSetup): void {
  const post = (msg: FromThread, transfer: ArrayBuffer[] = []): void =>
    port.postMessage(msg, transfer);
  const kept = setup.keep ? new Resources({ watch: setup.watch }) : null;
  const grants = new Map<number, { resolve: () => void; reject: (err: unknown) => void }>();
  const aborts = new Map<number, AbortController>();
  let queue: Promise<void> = Promise.resolve();
  // A lock taken or released here is known to the caller's thread too: if the process exits
  // there mid-call, it removes the locks this thread holds (lock.ts does so for its own thread).
  setLockObserver((path, held) => post({ type: 'lock', path, held }));

  const runTask = async (task: CallTask): Promise<void> => {
    const controller = new AbortController();
    aborts.set(task.id, controller);
    const flag = new Int32Array(task.flag);
    const control = new Control(
      controller.signal,
      flag,
      task.progress ? (progress) => post({ type: 'progress', id: task.id, progress }) : undefined,
    );
    const resources = kept ?? new Resources();
    try {
      control.check();
      const claim = (key: string): Promise<void> => {
        if (control.aborted) return Promise.reject(abortedError(undefined));
        post({ type: 'claim', id: task.id, key });
        return new Promise<void>((resolve, reject) => grants.set(task.id, { resolve, reject }));
      };
      const summary = await withJob(task.request, claim, (job) => run(job, resources, control));
      const { sent, transfer } = sendSummary(summary);
      post({ type: 'done', id: task.id, summary: sent }, transfer);
    } catch (err) {
      post({ type: 'failed', id: task.id, error: sendError(err) });
    } finally {
      aborts.delete(task.id);
      grants.delete(task.id);
      // After the answer: dropping the packs' pages and the heap's free memory takes a while
      // on a large tree, and the caller need not wait for it.
      try {
        if (kept === null) resources.close('worthwhile');
        else resources.idle();
      } catch (err) {
        // Never into the queue: a rejected link would stop every later call and the close.
        process.emitWarning(`pcheckout: releasing a call's resources failed: ${String(err)}`);
      }
    }
  };

  port.on('message', (msg: ToThread) => {
    switch (msg.type) {
      case 'run':
        queue = queue.then(() => runTask(msg.task));
        break;
      case 'granted':
        grants.get(msg.id)?.resolve();
        break;
      case 'abort':
        // A call still waiting for its worktree stops waiting.
        grants.get(msg.id)?.reject(abortedError(undefined));
        aborts.get(msg.id)?.abort();
        break;
      case 'close':
        void queue.then(() => {
          kept?.close();
          setLockObserver(null);
          post({ type: 'closed' });
          port.close();
        });
        break;
    }
  });
}

if (!isMainThread && parentPort && (workerData as { pcheckoutCall?: ThreadSetup })?.pcheckoutCall) {
  serve(parentPort, (workerData as { pcheckoutCall: ThreadSetup }).pcheckoutCall);
}
