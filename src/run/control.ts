/**
 * What a running call is told from outside and tells back: whether it was aborted (a signal on
 * this thread, or a flag the caller's thread sets when the call runs on an orchestrator
 * thread), and how far it got (progress by phase). Every phase checks `control.check()` at its
 * boundaries and inside its long loops, so an abort takes effect wherever the call is.
 */
import { PcheckoutError, callbackFailure } from '../errors.js';

/** The phases of a call, in order (docs/Architecture.md). */
export const PHASES = ['open', 'walk', 'plan', 'fetch', 'write', 'index', 'hook'] as const;
export type Phase = (typeof PHASES)[number];

export interface Progress {
  /**
   * The phase running: open (index, revision, locks), walk (trees), plan (merge, probe), fetch
   * (a partial clone's missing blobs, only when some are), write, index, hook.
   */
  phase: Phase;
  /**
   * Units of the phase finished so far: files for write, entries for walk and plan, else 0 or
   * 1 (fetch: 0, its total the blobs asked for).
   */
  done: number;
  total: number;
  /** Bytes of regular-file content written so far (write; the final count after it). */
  bytes: number;
}

/** The error of an aborted checkout; the signal's reason is its cause and named in the message. */
export function abortedError(reason: unknown): PcheckoutError {
  const why = reason instanceof Error ? reason.message : reason === undefined ? '' : String(reason);
  return new PcheckoutError(
    'ERR_ABORTED',
    why === '' ? 'the checkout was aborted' : `the checkout was aborted: ${why}`,
    { cause: reason },
  );
}

export class Control {
  private last: Progress = { phase: 'open', done: 0, total: 0, bytes: 0 };
  /**
   * Slot 0 nonzero once the call is aborted: set by the caller's thread (shared memory) when
   * the call runs on an orchestrator thread, else by the signal. Native steps read it too.
   */
  readonly flag: Int32Array;

  /**
   * `signal`: this thread's signal; `flag`: an Int32Array over shared memory whose first slot
   * the caller's thread sets to stop the call (null: one is made, set by the signal);
   * `report`: where progress goes.
   */
  constructor(
    readonly signal: AbortSignal | undefined,
    flag: Int32Array | null,
    private readonly report: ((p: Progress) => void) | undefined,
  ) {
    this.flag = flag ?? new Int32Array(new SharedArrayBuffer(4));
    if (signal?.aborted) Atomics.store(this.flag, 0, 1);
    else signal?.addEventListener('abort', () => Atomics.store(this.flag, 0, 1), { once: true });
  }

  get aborted(): boolean {
    return Atomics.load(this.flag, 0) !== 0 || this.signal?.aborted === true;
  }

  /** Throws ERR_ABORTED once the call is aborted. */
  check(): void {
    if (this.aborted) throw abortedError(this.signal?.reason);
  }

  /**
   * A phase starts (`total` units, when known). Checks for an abort first, unless the call is
   * past the point where stopping helps (the index committed: the checkout is done).
   */
  phase(phase: Phase, total = 0, abortable = true): void {
    if (abortable) this.check();
    this.emit({ phase, done: 0, total, bytes: this.last.bytes });
  }

  /** Progress within the current phase. */
  progress(done: number, total: number, bytes = this.last.bytes): void {
    this.emit({ phase: this.last.phase, done, total, bytes });
  }

  get wantsProgress(): boolean {
    return this.report !== undefined;
  }

  private emit(p: Progress): void {
    this.last = p;
    if (this.report === undefined) return;
    try {
      this.report(p);
    } catch (err) {
      throw callbackFailure(err);
    }
  }
}
