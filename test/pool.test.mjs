// When the Piscina pool is used: defaults, git config (checkout.workers,
// checkout.thresholdForParallelism), explicit options over config, and the threshold boundary.

import assert from 'node:assert/strict';
import os from 'node:os';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { assertMatchesGit, assertPoolRule, assertSummary } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone, git } from './helpers/git.mjs';

const CORES = os.availableParallelism();

/** Fresh clone with `config` set in its .git/config, checked out with `opts`, compared. */
async function run(repo, opts, config = {}) {
  const dir = freshClone(repo);
  for (const [k, v] of Object.entries(config)) git(dir, ['config', k, String(v)]);
  const summary = await checkout(dir, opts);
  const oracle = assertMatchesGit(dir, repo);
  assertSummary(summary, oracle, opts);
  return summary;
}

describe('pool selection', () => {
  let many; // 150 regular files
  let few; // 50 regular files
  let exact; // exactly 40 regular files
  let tiny; // 3 regular files
  before(() => {
    tiny = buildFlatRepo(3, { prefix: 'flat3', seed: 4 });
    many = buildFlatRepo(150, { prefix: 'flat150' });
    few = buildFlatRepo(50, { prefix: 'flat50', seed: 2 });
    exact = buildFlatRepo(40, { prefix: 'flat40', seed: 3 });
  });

  test(`defaults, 150 files: pool used iff cores > 1 (cores: ${CORES})`, async () => {
    const s = await run(many, {});
    assert.equal(s.threshold, 100, 'default threshold');
    assert.equal(s.files, 150);
    assert.equal(s.pool.used, CORES > 1);
    if (s.pool.used) {
      assert.ok(s.pool.workers >= 1 && s.pool.workers <= CORES, `pool.workers ${s.pool.workers}`);
    }
  });

  test('defaults, 50 files: below the default threshold, no pool', async () => {
    const s = await run(few, {});
    assert.equal(s.threshold, 100);
    assert.equal(s.pool.used, false);
  });

  test('threshold boundary: files > threshold uses the pool, files == threshold does not', async () => {
    const at = await run(exact, { workers: 2, threshold: 40 });
    assert.equal(at.pool.used, false, '40 files, threshold 40');
    const below = await run(exact, { workers: 2, threshold: 39 });
    assert.equal(below.pool.used, true, '40 files, threshold 39');
  });

  test('workers: 1 never uses the pool', async () => {
    const s = await run(many, { workers: 1, threshold: 0 });
    assert.equal(s.pool.used, false);
  });

  test('more workers than files: pool.workers stays within workers', async () => {
    const s = await run(exact, { workers: 64, threshold: 0 });
    assertPoolRule(s, 64, 0);
    assert.equal(s.pool.used, true);
  });

  describe('git config', () => {
    test('checkout.thresholdForParallelism is the default threshold', async () => {
      const s = await run(many, { workers: 2 }, { 'checkout.thresholdForParallelism': 1000 });
      assert.equal(s.threshold, 1000);
      assert.equal(s.pool.used, false);
      const low = await run(few, { workers: 2 }, { 'checkout.thresholdForParallelism': 10 });
      assert.equal(low.threshold, 10);
      assert.equal(low.pool.used, true);
    });

    test('explicit threshold wins over checkout.thresholdForParallelism', async () => {
      const s = await run(
        many,
        { workers: 2, threshold: 0 },
        { 'checkout.thresholdForParallelism': 1000 },
      );
      assert.equal(s.threshold, 0);
      assert.equal(s.pool.used, true);
    });

    test('checkout.workers = 1 disables the pool', async () => {
      const s = await run(many, { threshold: 0 }, { 'checkout.workers': 1 });
      assert.equal(s.pool.used, false);
    });

    test('explicit workers win over checkout.workers', async () => {
      const s = await run(many, { workers: 2, threshold: 0 }, { 'checkout.workers': 1 });
      assert.equal(s.pool.used, true);
      assert.ok(s.pool.workers <= 2);
    });

    test('checkout.workers = 3 caps the pool at 3', async () => {
      const s = await run(many, { threshold: 0 }, { 'checkout.workers': 3 });
      assertPoolRule(s, 3, 0);
      assert.equal(s.pool.used, true);
    });

    // git bounds nothing; a thread each costs ~10 MB, so 100000 from config would take the
    // machine down. The option's maximum holds whatever the source, and no more threads start
    // than there are chunks to hand out (3 files: at most 3).
    test('checkout.workers = 100000 is held to the maximum of the option (1024)', async () => {
      const s = await run(few, { threshold: 1000 }, { 'checkout.workers': 100000 });
      assert.equal(s.workers, 1024);
      assert.equal(s.pool.used, false);
    });

    test('never more threads than chunks, whatever the count asked for', async () => {
      const s = await run(tiny, { threshold: 0 }, { 'checkout.workers': 1024 });
      assert.equal(s.workers, 1024);
      assert.equal(s.pool.used, true);
      assert.ok(s.pool.workers >= 1 && s.pool.workers <= 3, `pool.workers ${s.pool.workers}`);
      const o = await run(tiny, { workers: 16, threshold: 0 });
      assert.ok(o.pool.workers <= 3, `pool.workers ${o.pool.workers} for 3 files`);
    });

    test('within the maximum an explicit count is honoured', async () => {
      const s = await run(many, { threshold: 0 }, { 'checkout.workers': 5 });
      assert.equal(s.workers, 5);
      assert.equal(s.pool.workers, 5);
    });

    for (const value of [0, -1]) {
      test(`checkout.workers = ${value} means all cores`, async () => {
        const s = await run(many, { threshold: 0 }, { 'checkout.workers': value });
        assert.equal(s.pool.used, CORES > 1);
        if (s.pool.used) assert.ok(s.pool.workers <= CORES, `pool.workers ${s.pool.workers}`);
      });
    }
  });
});
