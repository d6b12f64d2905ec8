// onProgress reports the phases in order, and within the write phase monotonic progress ending
// at total; AbortSignal cancels cleanly.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { assertMatchesGit, assertSummary } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone } from './helpers/git.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';

// 'fetch' only for a partial clone missing blobs (partial-clone.test.mjs): not reported here.
const PHASES = ['open', 'walk', 'plan', 'fetch', 'write', 'index', 'hook'];

function checkEvents(all, summary) {
  assert.ok(all.length >= 1, 'onProgress never called');
  // The phases come in order (a phase's last report may be repeated while it runs).
  const order = all.map((p) => PHASES.indexOf(p.phase));
  assert.ok(!order.includes(-1), `unknown phase in ${[...new Set(all.map((p) => p.phase))]}`);
  for (let i = 1; i < order.length; i++)
    assert.ok(order[i] >= order[i - 1], `phase ${all[i].phase} after ${all[i - 1].phase}`);
  assert.deepEqual(
    [...new Set(all.map((p) => p.phase))],
    ['open', 'walk', 'plan', 'write', 'index', 'hook'],
    'every phase reported',
  );
  const events = all.filter((p) => p.phase === 'write');
  const total = events[0].total;
  let prev = { done: 0, bytes: 0 };
  for (const [i, p] of events.entries()) {
    for (const k of ['done', 'total', 'bytes']) {
      assert.ok(Number.isInteger(p[k]) && p[k] >= 0, `event ${i}: ${k} = ${p[k]}`);
    }
    assert.equal(p.total, total, `event ${i}: total changed from ${total} to ${p.total}`);
    assert.ok(p.done >= prev.done, `event ${i}: done went back from ${prev.done} to ${p.done}`);
    assert.ok(
      p.bytes >= prev.bytes,
      `event ${i}: bytes went back from ${prev.bytes} to ${p.bytes}`,
    );
    assert.ok(p.done <= p.total, `event ${i}: done ${p.done} > total ${p.total}`);
    prev = p;
  }
  const last = events.at(-1);
  assert.equal(last.done, last.total, 'last event must have done === total');
  const candidates = [summary.entries, summary.files, summary.files + summary.symlinks];
  assert.ok(
    candidates.includes(total),
    `total ${total} is none of entries/files/files+symlinks ${candidates.join('/')}`,
  );
  assert.equal(last.bytes, summary.bytes, 'final progress bytes vs summary.bytes');
  // After the write, the byte count stays what was written.
  for (const p of all.slice(all.indexOf(last))) assert.equal(p.bytes, summary.bytes);
}

describe('progress and cancellation', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(150, { prefix: 'progress' });
  });

  for (const opts of [
    { workers: 1, threshold: 0 },
    { workers: 2, threshold: 0 },
  ]) {
    test(`onProgress: monotonic, ends at total (workers ${opts.workers})`, async () => {
      const dir = freshClone(repo);
      const events = [];
      let calledAfterResolve = false;
      let resolved = false;
      const summary = await checkout(dir, {
        ...opts,
        onProgress: (p) => {
          if (resolved) calledAfterResolve = true;
          events.push({ ...p });
        },
      });
      resolved = true;
      checkEvents(events, summary);
      const oracle = assertMatchesGit(dir, repo);
      assertSummary(summary, oracle, opts);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(calledAfterResolve, false, 'onProgress called after the promise resolved');
    });
  }

  test('an already-aborted signal: ERR_ABORTED, nothing written, no index', async () => {
    const dir = freshClone(repo);
    const stateBefore = targetState(dir);
    const signal = AbortSignal.abort();
    await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, { workers: 2, threshold: 0, signal }),
      'ERR_ABORTED',
    );
    assert.deepEqual(targetState(dir), stateBefore, 'worktree, index or HEAD changed');
  });

  // Aborting from the first progress report: either the engine stops (ERR_ABORTED, no index,
  // no lock) or it had already finished (then the result must be complete and correct).
  for (const opts of [
    { workers: 1, threshold: 0 },
    { workers: 2, threshold: 0 },
  ]) {
    test(`abort during the checkout (workers ${opts.workers})`, async () => {
      const dir = freshClone(repo);
      const ac = new AbortController();
      let summary;
      let error;
      try {
        summary = await checkout(dir, { ...opts, signal: ac.signal, onProgress: () => ac.abort() });
      } catch (err) {
        error = err;
      }
      if (error) {
        assert.ok(error instanceof PcheckoutError, `not a PcheckoutError: ${error}`);
        assert.equal(error.code, 'ERR_ABORTED', error.message);
        assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')), 'index written after abort');
        assert.ok(!fs.existsSync(path.join(dir, '.git', 'index.lock')), 'index.lock left');
      } else {
        const oracle = assertMatchesGit(dir, repo);
        assertSummary(summary, oracle, opts);
      }
    });
  }
});
