/**
 * While calls are in flight, the caller's thread asks the kernel for a short scheduler slice.
 *
 * A call's orchestrator thread and its writers keep both cores of a small machine busy; the
 * caller's event loop, which sleeps between ticks, then waits in the run queue when it wakes
 * (EEVDF lets a running thread finish its slice first). A short slice for the caller's thread
 * (Linux 6.12+, sched_attr.sched_runtime) lets it preempt them at once: bench/host.mjs's p99
 * event-loop delay fell from 2.9-6.6 to 1.6-2.6 ms with it (docs/benchmarks.md). The thread's
 * own slice is put back when the last call ends; its policy and nice value are never touched.
 *
 * PCHECKOUT_CALLER_SLICE_US sets the slice (100..100000 µs) or turns this off (0).
 */
import { loadAddon } from '../addon.js';

const DEFAULT_US = 100;
let inFlight = 0;
/** The slice to put back, while one of ours is set. */
let previousUs: number | null = null;

function wantedUs(): number {
  const text = process.env['PCHECKOUT_CALLER_SLICE_US'];
  if (text === undefined || text === '') return DEFAULT_US;
  const us = Number(text);
  return us === 0 || (Number.isInteger(us) && us >= 100 && us <= 100000) ? us : DEFAULT_US;
}

function apply(): void {
  if (process.platform !== 'linux') return;
  const us = wantedUs();
  if (us === 0) return;
  try {
    const change = loadAddon().setThreadSlice(us);
    if (change.applied) previousUs = change.previousUs;
  } catch {
    // No addon on this thread yet can only mean the call fails to load it too, and says why.
  }
}

function restore(): void {
  if (previousUs === null) return;
  const us = previousUs;
  previousUs = null;
  try {
    loadAddon().setThreadSlice(us === 0 || (us >= 100 && us <= 100000) ? us : 0);
  } catch {
    /* loaded when applied */
  }
}

/**
 * Marks a call in flight on the caller's thread; the returned function marks it ended (once).
 * Pools on a thread share one count: the slice stays short until the last of them ends.
 */
export function holdCallerSlice(): () => void {
  if (inFlight++ === 0) apply();
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--inFlight === 0) restore();
  };
}
