// While calls run, the caller's thread asks the kernel for a short scheduler slice (Linux 6.12+,
// src/call/caller-slice.ts), and gets its own back when the last call ends: read from
// /proc/<pid>/task/<tid>/sched's se.slice, on the caller's thread, during the call (from
// onProgress) and after. How much that shortens the event loop's stalls is bench/host.mjs's.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { checkout, createEngine } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone, gitOut } from './helpers/git.mjs';
import { DIST_INDEX } from './helpers/run.mjs';

const OPTS = { racyWait: false };
const SCHED = `/proc/${process.pid}/task/${process.pid}/sched`;

/** The main thread's slice in ns, or null where the kernel does not show one. */
function slice() {
  try {
    const m = /^se\.slice\s*:\s*(\d+)/m.exec(fs.readFileSync(SCHED, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

const why =
  process.platform !== 'linux'
    ? 'not Linux: the slice is a Linux scheduler setting'
    : slice() === null
      ? `${SCHED} shows no se.slice (a kernel before 6.12 has no per-thread slice)`
      : null;
if (why) console.log(`# caller-slice: skipped: ${why}`);

describe('the caller thread’s slice while calls run', { skip: why ?? false }, () => {
  const src = buildFlatRepo(300, { prefix: 'slice' });

  test('short during a checkout, the thread’s own afterwards; the checkout is git’s', async () => {
    const dir = freshClone(src);
    const before = slice();
    const seen = new Set();
    await checkout(dir, { ...OPTS, onProgress: () => seen.add(slice()) });
    assert.deepEqual([...seen], [100_000], 'every progress event saw a 100 µs slice');
    assert.equal(slice(), before);
    assertMatchesGit(dir, src.dir);
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });

  test('two calls at once: short until the last one ends; an engine counts too', async () => {
    const a = freshClone(src);
    const b = freshClone(src);
    const before = slice();
    const engine = createEngine();
    try {
      let first = null;
      const one = checkout(a, OPTS).then(() => (first = slice()));
      const two = engine.checkout(b, OPTS);
      const settled = await Promise.race([one, two.then(() => 'engine')]);
      // Whichever ended first, the other was still in flight then.
      if (settled !== 'engine') assert.equal(first, 100_000);
      await Promise.all([one, two]);
      assert.equal(slice(), before);
      assertMatchesGit(a, src.dir);
      assertMatchesGit(b, src.dir);
    } finally {
      await engine.close();
    }
  });

  test('a call that fails gives the slice back', async () => {
    const before = slice();
    await assert.rejects(checkout(freshClone(src), { ...OPTS, ref: 'no-such-ref' }));
    assert.equal(slice(), before);
  });

  test('PCHECKOUT_CALLER_SLICE_US=0 leaves the thread alone; a value sets it', () => {
    const dir = freshClone(src);
    const probe = (env) =>
      execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import fs from 'node:fs';
           import { checkout } from ${JSON.stringify(DIST_INDEX)};
           const f = '/proc/' + process.pid + '/task/' + process.pid + '/sched';
           const s = () => /^se\\.slice\\s*:\\s*(\\d+)/m.exec(fs.readFileSync(f, 'utf8'))[1];
           let during;
           await checkout(process.argv[1], { racyWait: false, force: true, onProgress: () => (during ??= s()) });
           console.log(JSON.stringify([during, s()]));`,
          dir,
        ],
        { env: { ...process.env, ...env }, encoding: 'utf8' },
      ).trim();
    const [offDuring, offAfter] = JSON.parse(probe({ PCHECKOUT_CALLER_SLICE_US: '0' }));
    assert.equal(offDuring, offAfter, 'turned off: the slice does not move');
    const [setDuring] = JSON.parse(probe({ PCHECKOUT_CALLER_SLICE_US: '250' }));
    assert.equal(setDuring, '250000');
  });
});
