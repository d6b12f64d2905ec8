// Errors keep their code across every boundary: from the addon, from a pool worker, from a
// callback, from an abort, and from the CLI (exit status). One table of codes, shared with the
// addon and checked when it loads, as are the layouts both sides read; numbers handed to the
// addon are checked before native code casts them.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, inThisThread, materialize, ErrorCodes, PcheckoutError } from '../dist/index.js';
import * as addonModule from '../dist/addon.js';
import { STAT_WORDS } from '../dist/index/write.js';
import { buildFlatRepo, freshClone, git, tmpDir } from './helpers/git.mjs';
import { assertRejectsWith, runCli, targetState } from './helpers/run.mjs';

const addon = addonModule.loadAddon();

describe('codes across the worker boundary', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(520, { prefix: 'codes' }); // 3 chunks even in process
  });

  // The worktree disappears after the first chunk: the next chunk's writer cannot open its
  // root and throws a coded native error (ERR_IO) — on the pool, inside a worker thread. Run on
  // the calling thread (as the CLI runs it), where onProgress is called as each chunk ends, so
  // that the rename lands between chunks; errors.test.mjs's corrupt packs cross the orchestrator thread's hop.
  for (const workers of [1, 2]) {
    test(`an error thrown by the addon keeps its code (workers ${workers}, threshold 0)`, async () => {
      const dir = freshClone(repo);
      const moved = `${dir}-moved`;
      let first = true;
      const err = await assertRejectsWith(
        PcheckoutError,
        () =>
          inThisThread.checkout(dir, {
            workers,
            threshold: 0,
            racyWait: false,
            onProgress: (p) => {
              if (p.phase !== 'write' || p.done === 0) return;
              if (first) fs.renameSync(dir, moved);
              first = false;
            },
          }),
        'ERR_IO',
      );
      assert.match(err.message, /No such file or directory/);
      assert.doesNotMatch(err.message, /worker/i, 'reported as a worker failure');
    });
  }
});

describe('one table of codes, layouts checked at load', () => {
  test('every code the addon can report is in the table', () => {
    assert.ok(Array.isArray(addon.errorCodes) && addon.errorCodes.length > 0);
    for (const code of addon.errorCodes) {
      assert.ok(Object.hasOwn(ErrorCodes, code), `the addon reports ${code}, not in ErrorCodes`);
    }
  });

  test("the addon's layouts are the ones TypeScript reads", () => {
    assert.equal(addon.layout.statWords, STAT_WORDS);
    assert.deepEqual(addon.layout, addonModule.EXPECTED_LAYOUT);
  });

  test('an addon that disagrees with the table or a layout is refused when it loads', () => {
    const altered = [
      { ...addon, errorCodes: [...addon.errorCodes, 'ERR_FROM_A_NEWER_ADDON'] },
      { ...addon, layout: { ...addon.layout, statWords: addon.layout.statWords + 1 } },
      {
        ...addon,
        layout: { ...addon.layout, fileStatus: { ...addon.layout.fileStatus, collided: 7 } },
      },
      { ...addon, layout: undefined },
    ];
    assert.doesNotThrow(() => addonModule.checkAddon(addon, 'the built addon'));
    for (const a of altered) {
      assert.throws(() => addonModule.checkAddon(a, 'an altered copy'), {
        code: 'ERR_ADDON_LOAD',
        message: /rebuild/,
      });
    }
  });
});

describe('numbers handed to the addon are checked before any cast', () => {
  const objects = path.join(tmpDir('numbers'), 'objects');
  fs.mkdirSync(objects);
  const bad = [Number.NaN, Infinity, -Infinity, -1, 2 ** 64, 1.5];
  const internal = { code: 'ERR_INTERNAL' };

  test('Odb cache budget', () => {
    for (const v of bad) {
      assert.throws(() => new addon.Odb([objects], v), internal, `cacheBytes ${v}`);
    }
    new addon.Odb([objects], 0).close();
  });

  test('verifyPath / verifyPaths mode and protection bits', () => {
    const p = Buffer.from('a');
    for (const v of [...bad, 2 ** 32, 4]) {
      assert.throws(() => addon.verifyPath(p, 0o100644, v), internal, `protect ${v}`);
      assert.throws(
        () => addon.verifyPaths(Buffer.from('a\0'), Uint32Array.of(0o100644), v),
        internal,
      );
    }
    for (const v of [...bad, 2 ** 32]) {
      assert.throws(() => addon.verifyPath(p, v, 1), internal, `mode ${v}`);
    }
    assert.equal(addon.verifyPath(p, 0o100644, 3), null);
  });

  test('write request sizes and stream threshold', () => {
    const odb = new addon.Odb([objects], 0);
    const root = tmpDir('numbers-root');
    const req = (over) => ({
      root,
      paths: Buffer.from('a\0'),
      oids: Buffer.alloc(20),
      modes: Uint32Array.of(0o100644),
      sizes: Float64Array.of(0),
      streamThreshold: 1024,
      ...over,
    });
    try {
      for (const v of [Number.NaN, Infinity, -1]) {
        assert.throws(() => odb.writeFiles(req({ sizes: Float64Array.of(v) })), internal);
        assert.throws(() => odb.writeFiles(req({ streamThreshold: v })), internal);
      }
    } finally {
      odb.close();
    }
  });
});

describe('callbacks, aborts and options', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(200, { prefix: 'callbacks' });
  });

  for (const workers of [1, 2]) {
    test(`an onProgress that throws: ERR_CALLBACK with that error as the cause (workers ${workers})`, async () => {
      const dir = freshClone(repo);
      const boom = new Error('boom from the callback');
      const err = await assertRejectsWith(
        PcheckoutError,
        () =>
          checkout(dir, {
            workers,
            threshold: 0,
            racyWait: false,
            onProgress: () => {
              throw boom;
            },
          }),
        'ERR_CALLBACK',
      );
      assert.equal(err.cause, boom);
      assert.match(err.message, /onProgress/);
      assert.match(err.message, /boom from the callback/);
      const state = targetState(dir);
      assert.equal(state.index, null, 'an index was written');
      assert.equal(state.indexLock, null, 'index.lock left behind');
    });

    test(`an abort keeps its reason (workers ${workers})`, async () => {
      const dir = freshClone(repo);
      const ac = new AbortController();
      const reason = new Error('the user gave up');
      const err = await assertRejectsWith(
        PcheckoutError,
        () =>
          checkout(dir, {
            workers,
            threshold: 0,
            racyWait: false,
            signal: ac.signal,
            onProgress: () => ac.abort(reason),
          }),
        'ERR_ABORTED',
      );
      assert.equal(err.cause, reason);
      assert.match(err.message, /the user gave up/);
      assert.equal(targetState(dir).indexLock, null, 'index.lock left behind');
    });
  }

  test('an abort before the start keeps its reason too', async () => {
    const dir = freshClone(repo);
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, { signal: AbortSignal.abort('not today') }),
      'ERR_ABORTED',
    );
    assert.equal(err.cause, 'not today');
    assert.match(err.message, /not today/);
  });

  test('unknown option keys are refused, nothing written', async () => {
    const dir = freshClone(repo);
    const before = targetState(dir);
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, { wrokers: 2 }),
      'ERR_INVALID_OPTION',
    );
    assert.match(err.message, /wrokers/);
    // An empty list of paths names nothing: refused, not taken as a restore of everything.
    for (const paths of [[], [''], ['a', 3]]) {
      const bad = await assertRejectsWith(
        PcheckoutError,
        () => checkout(dir, { paths }),
        'ERR_INVALID_OPTION',
      );
      assert.match(bad.message, /non-empty array of non-empty strings for option paths/);
    }
    const target = tmpDir('unknown-key');
    await assertRejectsWith(
      PcheckoutError,
      () => materialize(repo.dir, target, { restore: true }),
      'ERR_INVALID_OPTION',
    );
    assert.deepEqual(targetState(dir), before);
  });
});

describe('config errors and messages', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(3, { prefix: 'config-errors' });
  });

  test('a bad config value: ERR_BAD_CONFIG, exit status 128 (fatal, not the usage status 129)', async () => {
    const dir = freshClone(repo);
    git(dir, ['config', 'checkout.workers', 'lots']);
    await assertRejectsWith(PcheckoutError, () => checkout(dir), 'ERR_BAD_CONFIG');
    const r = runCli(['--racy-wait=never', dir]);
    assert.equal(r.status, 128, r.stderr);
    assert.match(r.stderr, /^pcheckout: ERR_BAD_CONFIG: .*'lots'.*checkout\.workers/);
    assert.equal(targetState(dir).indexLock, null);
    // A usage error keeps the usage status.
    assert.equal(runCli(['--workers', 'x', dir]).status, 129);
  });

  test('a malformed config file: ERR_BAD_CONFIG, exit status 128', () => {
    const dir = freshClone(repo);
    fs.appendFileSync(path.join(dir, '.git', 'config'), '[core\n');
    const r = runCli(['--racy-wait=never', dir]);
    assert.equal(r.status, 128, r.stderr);
    assert.match(r.stderr, /ERR_BAD_CONFIG/);
  });

  test('a failed system call names the errno once', async () => {
    const blocker = path.join(tmpDir('errno'), 'file');
    fs.writeFileSync(blocker, 'x');
    const err = await assertRejectsWith(
      PcheckoutError,
      () => materialize(repo.dir, path.join(blocker, 'target')),
      'ERR_IO',
    );
    const count = (s) => err.message.split(s).length - 1;
    assert.equal(count('ENOTDIR'), 1, err.message);
    assert.equal(count(blocker), 1, err.message);
  });
});
