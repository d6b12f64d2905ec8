// The racy-git wait: git re-hashes entries stamped in the index's own second; pcheckout waits
// for that second to pass only when the re-hash would cost more than the wait ('auto').
// This is the one test file that lets the wait happen.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { decideRacyWait } from '../dist/index/racy.js';
import { STAT_WORDS } from '../dist/index/write.js';
import { buildFlatRepo, freshClone, gitOut } from './helpers/git.mjs';
import { runCli } from './helpers/run.mjs';

function stats(files) {
  const out = new Uint32Array(files.length * STAT_WORDS);
  files.forEach(([mtime, size], k) => {
    out[k * STAT_WORDS + 2] = mtime;
    out[k * STAT_WORDS + 5] = k + 1; // an inode: written by this checkout
    out[k * STAT_WORDS + 9] = size;
  });
  return out;
}

describe('racy-git wait', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(40, { prefix: 'racy' });
  });

  test('auto: a few small files just written are cheaper to re-hash than the wait', () => {
    const now = 1_800_000_000_400; // 400 ms into a second
    const d = decideRacyWait(
      'auto',
      stats([
        [1_800_000_000, 100],
        [1_799_999_999, 50],
      ]),
      now,
    );
    assert.equal(d.entries, 1);
    assert.equal(d.bytes, 100);
    assert.ok(d.waitMs > 500 && d.waitMs < 700, `waitMs ${d.waitMs}`);
    assert.equal(d.waited, false);
    assert.equal(decideRacyWait('always', stats([[1_800_000_000, 100]]), now).waited, true);
    assert.equal(decideRacyWait('never', stats([[1_800_000_000, 100]]), now).waited, false);
  });

  test('auto: a second full of writes (many files, many bytes) is worth waiting out', () => {
    const now = 1_800_000_000_900; // 100 ms left
    const files = Array.from({ length: 20_000 }, () => [1_800_000_000, 16_384]);
    const d = decideRacyWait('auto', stats(files), now);
    assert.equal(d.entries, 20_000);
    assert.ok(d.rehashMs > d.waitMs, `${d.rehashMs} vs ${d.waitMs}`);
    assert.equal(d.waited, true);
  });

  test("auto: a few racy files in a big index are worth waiting for (git's status rewrites it)", () => {
    const now = 1_800_000_000_500; // 500 ms left
    // 1,000 small racy files: ~25 ms to re-hash. In an index of 1,000 entries that is all git's
    // next look costs; in one of a million it writes the whole index again (~0.5 s).
    const racy = Array.from({ length: 1000 }, () => [1_800_000_000, 100]);
    const small = decideRacyWait('auto', stats(racy), now);
    assert.equal(small.waited, false, `${small.rehashMs} vs ${small.waitMs}`);
    const kept = Array.from({ length: 999_000 }, () => [0, 0]); // not written by this checkout
    const positions = racy.map((_, k) => k);
    const big = decideRacyWait('auto', stats([...racy, ...kept]), now, positions);
    assert.equal(big.entries, 1000);
    assert.ok(big.rehashMs > big.waitMs, `${big.rehashMs} vs ${big.waitMs}`);
    assert.equal(big.waited, true);
  });

  test('nothing written in the current second: no wait in any policy', () => {
    const now = 1_800_000_005_000;
    for (const policy of ['auto', 'always', 'never']) {
      const d = decideRacyWait(policy, stats([[1_800_000_000, 1 << 20]]), now);
      assert.equal(d.entries, 0);
      assert.equal(d.waited, false);
    }
  });

  test("'always' leaves an index from a later second than every file", async () => {
    const dir = freshClone(repo);
    const s = await checkout(dir, { racyWait: 'always' });
    assert.equal(s.racy.policy, 'always');
    const indexSec = Math.floor(fs.statSync(path.join(dir, '.git', 'index')).mtimeMs / 1000);
    for (const name of fs.readdirSync(dir)) {
      if (name === '.git') continue;
      const sec = Math.floor(fs.lstatSync(path.join(dir, name)).mtimeMs / 1000);
      assert.ok(sec < indexSec, `${name} (${sec}) is racy against the index (${indexSec})`);
    }
    if (s.racy.entries > 0) assert.ok(s.timings.racyWait > 0);
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });

  test("'always' on a forced restore: the index made before the wait is stamped after it", async () => {
    const dir = freshClone(repo);
    await checkout(dir, { racyWait: false });
    const names = ['f/0/file-0.txt', 'f/0/file-1.txt', 'f/1/file-25.txt'];
    for (const name of names) fs.rmSync(path.join(dir, name));
    const s = await checkout(dir, { force: true, racyWait: 'always' });
    assert.equal(s.created + s.updated, names.length);
    const indexSec = Math.floor(fs.statSync(path.join(dir, '.git', 'index')).mtimeMs / 1000);
    for (const name of names) {
      const sec = Math.floor(fs.lstatSync(path.join(dir, name)).mtimeMs / 1000);
      assert.ok(sec < indexSec, `${name} (${sec}) is racy against the index (${indexSec})`);
    }
    if (s.racy.entries > 0) assert.ok(s.timings.racyWait > 0);
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });

  test("false / 'never' and the default 'auto' on a small checkout do not wait", async () => {
    for (const racyWait of [false, 'never', undefined]) {
      const dir = freshClone(repo);
      const s = await checkout(dir, racyWait === undefined ? {} : { racyWait });
      assert.equal(s.racy.policy, racyWait === undefined ? 'auto' : 'never');
      assert.equal(s.racy.waited, false);
      assert.equal(s.timings.racyWait, 0);
      assert.equal(gitOut(dir, 'status', '--porcelain'), '');
    }
  });

  test('CLI: --racy-wait=never|always|auto, --no-racy-wait, and a bad value is a usage error', () => {
    for (const args of [['--racy-wait=never'], ['--no-racy-wait'], ['--racy-wait', 'auto']]) {
      const dir = freshClone(repo);
      const r = runCli(['--json', ...args, dir]);
      assert.equal(r.status, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(s.racy.policy, args[0] === '--racy-wait' ? 'auto' : 'never');
    }
    const r = runCli(['--racy-wait=sometimes', freshClone(repo)]);
    assert.equal(r.status, 129);
    assert.match(r.stderr, /ERR_INVALID_OPTION/);
  });

  test('an invalid racyWait option is refused', async () => {
    await assert.rejects(checkout(freshClone(repo), { racyWait: 'maybe' }), {
      code: 'ERR_INVALID_OPTION',
    });
  });
});
