import { STAT_WORDS } from './write.js';

/**
 * git trusts an index entry's stat data only when the index file is from a later second than
 * the file ("racy git"; Debian's git compares whole seconds). These decide the short wait before
 * the index is written, so git does not re-hash what was just written.
 */
export function newestMtime(stats: Uint32Array): number {
  let newest = 0;
  for (let i = 2; i < stats.length; i += STAT_WORDS) if (stats[i]! > newest) newest = stats[i]!;
  return newest;
}

const MAX_RACY_WAIT_MS = 2000; // a file stamped far in the future (clock skew) is not waited for

/** Sleeps until the wall clock is past the second of the newest mtime; returns the ms waited. */
export async function leaveRacySecond(stats: Uint32Array): Promise<number> {
  const until = (newestMtime(stats) + 1) * 1000 + 5; // +5 ms: file times come from a coarse clock
  const wait = until - Date.now();
  if (wait <= 0 || wait > MAX_RACY_WAIT_MS) return 0;
  await new Promise((resolve) => setTimeout(resolve, wait));
  return wait;
}
