// The addon is safe in worker threads: it loads in a Worker, checkout() runs there (with and
// without a nested pool), several Workers run at once, Workers come and go (per-environment
// init and cleanup), and a Worker terminated mid-checkout does not take the process down.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { before, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { checkout } from '../dist/index.js';
import { assertMatchesGit, assertSummary } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone } from './helpers/git.mjs';
import { ADDON, DIST_INDEX } from './helpers/run.mjs';

const WORKER = new URL('./helpers/checkout-worker.mjs', import.meta.url);

/** Run the worker script; resolves with { messages, exitCode, error } once it has exited. */
function runWorker(data, { terminateAfterOnline } = {}) {
  return new Promise((resolve) => {
    const worker = new Worker(WORKER, {
      workerData: { pcheckoutTest: true, addonPath: ADDON, distIndex: DIST_INDEX, ...data },
    });
    const messages = [];
    let error = null;
    worker.on('message', (m) => messages.push(m));
    worker.on('error', (e) => (error = e));
    if (terminateAfterOnline !== undefined) {
      worker.on('online', () => setTimeout(() => worker.terminate(), terminateAfterOnline));
    }
    worker.on('exit', (exitCode) => resolve({ messages, exitCode, error }));
  });
}

function assertWorkerOk(r) {
  assert.equal(r.error, null, `worker error: ${r.error?.stack}`);
  assert.equal(r.messages.length, 1, `worker messages: ${JSON.stringify(r.messages)}`);
  const [m] = r.messages;
  assert.equal(m.ok, true, `worker failed: ${JSON.stringify(m.error)}`);
  assert.equal(r.exitCode, 0, 'worker exit code');
  return m;
}

describe('addon in worker threads', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(120, { prefix: 'worker' });
  });

  test('the addon loads on the main thread', () => {
    const addon = createRequire(import.meta.url)('../build/Release/pcheckout.node');
    assert.equal(typeof addon, 'object');
    assert.ok(Object.keys(addon).length > 0, 'the addon exports nothing');
  });

  for (const opts of [
    { workers: 1, threshold: 0 },
    { workers: 2, threshold: 0 },
  ]) {
    const label = opts.workers > 1 ? 'with a nested pool' : 'sequential';
    test(`checkout from inside a Worker (${label})`, async () => {
      const dir = freshClone(repo);
      const m = assertWorkerOk(await runWorker({ repo: dir, opts }));
      assert.ok(m.addonKeys.length > 0, 'the addon exports nothing inside the Worker');
      const oracle = assertMatchesGit(dir, repo);
      assertSummary(m.summary, oracle, opts);
      assert.ok(m.progressEvents > 0, 'onProgress never called inside the Worker');
    });
  }

  test('two Workers checking out at the same time', async () => {
    const dirs = [freshClone(repo), freshClone(repo)];
    const results = await Promise.all(
      dirs.map((dir, i) => runWorker({ repo: dir, opts: { workers: 1 + i, threshold: 0 } })),
    );
    for (const [i, r] of results.entries()) {
      const m = assertWorkerOk(r);
      assertSummary(m.summary, assertMatchesGit(dirs[i], repo));
    }
  });

  test('load in 5 Workers one after another, then the main thread still works', async () => {
    createRequire(import.meta.url)('../build/Release/pcheckout.node'); // loaded here too
    for (let i = 0; i < 5; i++) assertWorkerOk(await runWorker({ loadOnly: true }));
    const dir = freshClone(repo);
    const summary = await checkout(dir, { workers: 2, threshold: 0 });
    assertSummary(summary, assertMatchesGit(dir, repo), { workers: 2, threshold: 0 });
  });

  test('a Worker terminated mid-checkout does not crash the process', async () => {
    for (const delay of [0, 5, 30]) {
      const r = await runWorker(
        { repo: freshClone(repo), opts: { workers: 2, threshold: 0 } },
        { terminateAfterOnline: delay },
      );
      assert.equal(r.error, null, `worker error: ${r.error?.stack}`);
    }
    const dir = freshClone(repo);
    const summary = await checkout(dir, { workers: 2, threshold: 0 });
    assertSummary(summary, assertMatchesGit(dir, repo), { workers: 2, threshold: 0 });
  });
});
