// createEngine(): one pool, one reader per repository, kept across calls. Every call's result
// is compared with git's own checkout of the same commit (bytes, modes, index, clean status);
// the engine must notice a repack between calls, run concurrent calls one after another, keep
// working after a call that failed, and refuse calls once closed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createEngine } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone, git, gitOut, tmpPath } from './helpers/git.mjs';

const OPTS = { racyWait: false, threshold: 0 };

describe('a warm engine', () => {
  const src = buildFlatRepo(300, { prefix: 'engine' });
  // A second commit that edits a tenth of the files and adds a few.
  for (let i = 0; i < 300; i += 10)
    src.write(`f/${Math.floor(i / 25)}/file-${i}.txt`, `edit ${i}\n`);
  src.write('new/one.txt', 'one\n');
  src.commit('edits');
  git(src.dir, ['repack', '-adq']);

  test('checkouts and materializes through one pool match git, call after call', async () => {
    const engine = createEngine({ workers: 2 });
    try {
      const a = freshClone(src.dir, { prefix: 'engine-a' });
      const b = freshClone(src.dir, { prefix: 'engine-b' });
      const first = await engine.checkout(a, { ...OPTS, ref: 'main~1' });
      assert.equal(first.pool.used, true);
      assert.equal(first.pool.workers, 2);
      assertMatchesGit(a, src.dir, { ref: 'main~1' });
      const second = await engine.checkout(a, { ...OPTS, ref: 'main' });
      assert.equal(second.mode, 'switch');
      assert.equal(second.files, 31); // 30 edited, 1 added
      assertMatchesGit(a, src.dir, { ref: 'main' });
      await engine.checkout(b, OPTS);
      assertMatchesGit(b, src.dir);
      const target = tmpPath('engine-mat');
      const m = await engine.materialize(src.dir, target, { ...OPTS, ref: 'main~1' });
      assert.equal(m.mode, 'materialize');
      assert.equal(m.files, 300);
      assert.equal(
        gitOut(src.dir, 'show', 'main~1:f/0/file-0.txt'),
        fs.readFileSync(path.join(target, 'f/0/file-0.txt'), 'utf8').replace(/\n$/, ''),
      );
    } finally {
      await engine.close();
    }
  });

  test('objects packed after the first call are found (the readers are renewed)', async () => {
    const repo = buildFlatRepo(120, { prefix: 'engine-repack', seed: 3 });
    git(repo.dir, ['repack', '-adq']);
    const engine = createEngine({ workers: 2 });
    try {
      const mat = tmpPath('engine-repack-mat');
      await engine.materialize(repo.dir, mat, OPTS);
      for (let i = 0; i < 120; i += 4)
        repo.write(`f/${Math.floor(i / 25)}/file-${i}.txt`, `v2 ${i}\n`);
      repo.commit('second');
      git(repo.dir, ['repack', '-adq']); // the first pack is gone, the new one has everything
      const s = await engine.materialize(repo.dir, mat, OPTS);
      assert.equal(s.files, 30);
      assert.equal(fs.readFileSync(path.join(mat, 'f/0/file-0.txt'), 'utf8'), 'v2 0\n');
      const dir = freshClone(repo.dir, { prefix: 'engine-repack-co' });
      await engine.checkout(dir, OPTS);
      assertMatchesGit(dir, repo.dir);
    } finally {
      await engine.close();
    }
  });

  test('concurrent calls run one after another; a failed call leaves the engine usable', async () => {
    const engine = createEngine();
    try {
      const dirs = [0, 1, 2].map((k) => freshClone(src.dir, { prefix: `engine-par-${k}` }));
      const bad = engine.checkout(dirs[0], { ...OPTS, ref: 'no-such-branch' });
      const runs = dirs.map((d, k) =>
        engine.checkout(d, { ...OPTS, ref: k === 1 ? 'main~1' : 'main' }),
      );
      await assert.rejects(bad, { code: 'ERR_BAD_REF' });
      await Promise.all(runs);
      dirs.forEach((d, k) => assertMatchesGit(d, src.dir, { ref: k === 1 ? 'main~1' : 'main' }));
    } finally {
      await engine.close();
    }
    await assert.rejects(engine.checkout(src.dir, OPTS), /the engine is closed/);
  });

  test('options are checked', () => {
    assert.throws(() => createEngine({ wrokers: 2 }), { code: 'ERR_INVALID_OPTION' });
    assert.throws(() => createEngine({ workers: -1 }), { code: 'ERR_INVALID_OPTION' });
    assert.throws(() => createEngine({ workers: 2.5 }), { code: 'ERR_INVALID_OPTION' });
  });
});
