// The kernel's inotify queue limit, for tests of a warm engine's watch after lost events.
import fs from 'node:fs';

/** max_queued_events: read by an inotify instance when it is made. */
export const QUEUE = '/proc/sys/fs/inotify/max_queued_events';

/** A test option: skipped, with the reason, where the limit cannot be changed. */
export const queueSkip = (() => {
  try {
    fs.accessSync(QUEUE, fs.constants.W_OK);
    return false;
  } catch {
    return `${QUEUE} is not writable (needs root)`;
  }
})();

/** Runs `make` (which makes the engine, and so its instance) with the queue at `limit` events. */
export async function withQueueLimit(limit, make) {
  const old = fs.readFileSync(QUEUE, 'utf8').trim();
  try {
    fs.writeFileSync(QUEUE, String(limit));
    return await make();
  } finally {
    fs.writeFileSync(QUEUE, old);
  }
}
