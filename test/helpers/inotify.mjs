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

/**
 * One character of `file` changed, its size and times put back: a change that stat data cannot
 * show, only a watch's event (or the content).
 */
export function editKeepingSizeAndTimes(file) {
  const st = fs.statSync(file);
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(
    file,
    text.replace(/./, (c) => (c === 'X' ? 'Y' : 'X')),
  );
  fs.utimesSync(file, st.atime, st.mtime);
}
