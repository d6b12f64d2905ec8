// A worktree with more directories than inotify lets the user watch: the warm engine's watch
// stops for good, the calls still check out exactly what git does (probing everything), and
// summary.watch says why it vouches for nothing. The limit is the kernel's, per user: this test
// lowers fs.inotify.max_user_watches for a moment (root only; it puts it back), so it runs in
// the slow suite, one file at a time.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { checkout, createEngine } from '../../dist/index.js';
import { buildFlatRepo, freshClone, gitOut } from '../helpers/git.mjs';

const LIMIT = '/proc/sys/fs/inotify/max_user_watches';

function canLower() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'not root';
  try {
    fs.accessSync(LIMIT, fs.constants.W_OK);
  } catch {
    return `${LIMIT} is not writable`;
  }
  return null;
}

test('more directories than inotify watches: the watch stops and says why', async (t) => {
  const why = canLower();
  if (why !== null) {
    console.log(`# skipped: ${why}`);
    t.skip(why);
    return;
  }
  // 1,500 files in 60 directories.
  const repo = buildFlatRepo(1500, { prefix: 'watch-limit' });
  const dir = freshClone(repo.dir, { prefix: 'watch-limit' });
  await checkout(dir, { racyWait: false });
  const before = fs.readFileSync(LIMIT, 'utf8').trim();
  const engine = createEngine({ workers: 2 });
  try {
    fs.writeFileSync(LIMIT, '20');
    const first = await engine.checkout(dir, { force: true, racyWait: false });
    const second = await engine.checkout(dir, { force: true, racyWait: false });
    for (const s of [first, second]) {
      assert.equal(s.watch.active, false);
      assert.equal(s.watch.known, 0);
      assert.match(
        s.watch.stopped ?? '',
        /out of inotify watches: the worktree has \d+ directories/,
      );
      assert.match(s.watch.stopped ?? '', /max_user_watches \(20\)/);
    }
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  } finally {
    fs.writeFileSync(LIMIT, before);
    await engine.close();
  }
  // With room for them, a new engine's watch vouches again.
  const again = createEngine({ workers: 2 });
  try {
    await again.checkout(dir, { force: true, racyWait: false });
    const s = await again.checkout(dir, { force: true, racyWait: false });
    assert.equal(s.watch.stopped, null);
    assert.equal(s.watch.active, true);
    assert.ok(s.watch.known > 0, 'the watch vouched for nothing');
  } finally {
    await again.close();
  }
});
