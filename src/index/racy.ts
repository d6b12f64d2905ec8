import { STAT_WORDS, hasStatData } from './write.js';

/**
 * git trusts an index entry's stat data only when the index file is from a later second than
 * the file ("racy git"; Debian's git compares whole seconds); a racy entry is re-read and hashed
 * on git's next look. Waiting for the second to pass before the index is written avoids that, at
 * the price of the wait: `auto` pays it only when git's re-hashing (and the rewrite of the whole
 * index that follows it) would cost more.
 */
export type RacyPolicy = 'auto' | 'always' | 'never';

export interface RacyDecision {
  policy: RacyPolicy;
  /** Written entries that would be racy if the index were written at once, and their bytes. */
  entries: number;
  bytes: number;
  /**
   * What git's next look would spend on those (estimated, ms: re-hashing them, then writing the
   * whole index again), and the wait that avoids it.
   */
  rehashMs: number;
  waitMs: number;
  waited: boolean;
}

// git's re-hash rate for racy entries, measured here on tmpfs: `git status` with every entry
// racy (the index's mtime set back to the files' second) against none (set ahead). The Linux
// tree (78,635 files, 1,238 MiB) 4.6 s against 0.12 s; 1,000 files of 6.3 MiB 40 ms against
// 0; 4,696 files of 60.5 MiB 230 ms against 10 ms. A fit: ~25 µs per file plus ~2 ms per MiB
// (sha1dc). Overestimating it makes every checkout wait more often than git would lose.
const REHASH_MS_PER_FILE = 0.025;
const REHASH_MS_PER_BYTE = 2 / (1024 * 1024);
// Having re-hashed a racy entry, git's status writes the whole index again (checked with git
// 2.39: the index's mtime moves). Measured: `git update-index --index-version 2` of a
// 1,000,000-entry index (120 MB) took 0.69-1.07 s, of which reading it ~0.35: ~0.5 µs an entry.
// A 1% switch of a million files left 15,000 racy files: re-hash ~0.46 s, rewrite ~0.5 s,
// against a wait of ~0.5 s (which overlaps the index's own write).
const REWRITE_MS_PER_ENTRY = 0.0005;
const MAX_RACY_WAIT_MS = 2000; // a file stamped far in the future (clock skew) is not waited for
const MARGIN_MS = 5; // file times come from a coarse clock

/** The newest mtime (seconds) among the entries at `positions` of `stats`. */
export function newestWritten(stats: Uint32Array, positions: readonly number[]): number {
  let newest = 0;
  for (const k of positions) newest = Math.max(newest, stats[k * STAT_WORDS + 2]!);
  return newest;
}

/**
 * Decides whether to wait, from the index's stat data (`written`: every entry's) and the entries
 * just written (at `positions`, or every entry with stat data).
 */
export function decideRacyWait(
  policy: RacyPolicy,
  written: Uint32Array,
  now = Date.now(),
  positions?: readonly number[],
): RacyDecision {
  // The second an index written now could be stamped with: file times come from the kernel's
  // coarse clock (4 ms steps here), so just after a second begins a file — or the index — may
  // still be stamped with the one before. Files of that second count as racy too.
  const second = Math.floor((now - MARGIN_MS) / 1000);
  let entries = 0;
  let bytes = 0;
  let newest = 0;
  const count = positions ? positions.length : written.length / STAT_WORDS;
  for (let j = 0; j < count; j++) {
    const k = positions ? positions[j]! : j;
    if (!hasStatData(written, k)) continue; // not written by this checkout
    const s = k * STAT_WORDS;
    const mtime = written[s + 2]!;
    if (mtime > newest) newest = mtime;
    if (mtime >= second) {
      entries++;
      bytes += written[s + 9]!;
    }
  }
  const waitMs = entries === 0 ? 0 : Math.max(0, (newest + 1) * 1000 + MARGIN_MS - now);
  // The index's entries: `written` holds stat data for every one.
  const rewriteMs = entries === 0 ? 0 : (written.length / STAT_WORDS) * REWRITE_MS_PER_ENTRY;
  const rehashMs = entries * REHASH_MS_PER_FILE + bytes * REHASH_MS_PER_BYTE + rewriteMs;
  const worth = waitMs > 0 && waitMs <= MAX_RACY_WAIT_MS;
  const waited = worth && (policy === 'always' || (policy === 'auto' && waitMs < rehashMs));
  return {
    policy,
    entries,
    bytes,
    rehashMs: Math.round(rehashMs * 10) / 10,
    waitMs: Math.round(waitMs * 10) / 10,
    waited,
  };
}

/** Sleeps until the wall clock is past the second `newest` (an mtime); returns the ms waited. */
export async function leaveRacySecond(newest: number): Promise<number> {
  const until = (newest + 1) * 1000 + MARGIN_MS;
  const started = Date.now();
  if (until - started <= 0 || until - started > MAX_RACY_WAIT_MS) return 0;
  // A timer may fire a millisecond early (libuv counts whole milliseconds): sleep again until
  // the clock is past.
  for (let left = until - started; left > 0; left = until - Date.now()) {
    await new Promise((resolve) => setTimeout(resolve, left));
  }
  return Date.now() - started;
}
