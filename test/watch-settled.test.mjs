// A warm engine's settled worktree (summary.watch.settled): when the last call left the index
// and the worktree exactly the tree asked for and nothing happened since — no event in any
// watched directory, none lost, the index the same file — the call reads, plans and writes
// nothing. Every change a user can make between two calls must take it off that path: each
// test primes an engine on one twin until its calls are settled, changes both twins the same
// way, checks out with the engine and with git, and compares everything.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { createEngine } from '../dist/index.js';
import { git, tmpPath } from './helpers/git.mjs';
import { editKeepingSizeAndTimes, queueSkip, withQueueLimit } from './helpers/inotify.mjs';
import { KEEP_FILES, buildSwitchRepo, compareTwins, makeTwins } from './helpers/twin.mjs';

const abs = (dir, rel) => path.join(dir, rel);
const FORCE = { force: true, workers: 2, threshold: 0, racyWait: false };

/** Calls until one is settled (the first arms the watches and records; the second is settled). */
async function settle(engine, dir, op = FORCE) {
  for (let i = 0; i < 3; i++) {
    const s = await engine.checkout(dir, op);
    if (s.watch.settled) return s;
  }
  assert.fail('three calls with nothing changed, none settled');
}

/** Twins at `at`, and an engine whose calls on the pc twin are settled. */
async function primed(src, at = 'B') {
  const twins = await makeTwins(src, { at });
  const engine = createEngine({ workers: 2 });
  const s = await settle(engine, twins.pc);
  assert.equal(s.watch.known, s.entries, 'a settled call vouches for every entry');
  return { twins, engine };
}

/** Changes both twins, checks out with the engine and with git (`op`), compares; not settled. */
async function afterChange(src, mutate, { at = 'B', op = { force: true } } = {}) {
  const { twins, engine } = await primed(src, at);
  try {
    await mutate(twins.git);
    await mutate(twins.pc);
    const { summary } = await compareTwins(twins, {
      op,
      run: (dir) => engine.checkout(dir, { ...FORCE, ...op }),
    });
    assert.equal(summary.watch.settled, false, 'settled past a change');
    assert.equal(git(twins.pc, ['status', '--porcelain', '--untracked-files=no']), '');
    // And it settles again.
    await settle(engine, twins.pc);
    return summary;
  } finally {
    await engine.close();
  }
}

describe('warm engine: a settled worktree', () => {
  let src;
  before(() => {
    src = buildSwitchRepo('settled');
  });

  test('nothing changed: nothing read, planned or written, and git agrees', async () => {
    const { twins, engine } = await primed(src);
    try {
      const indexFile = abs(twins.pc, '.git/index');
      let bytes;
      let mtime;
      const { summary } = await compareTwins(twins, {
        op: { force: true },
        localChanges: false,
        run: async (dir) => {
          bytes = fs.readFileSync(indexFile);
          mtime = fs.statSync(indexFile).mtimeMs;
          const s = await engine.checkout(dir, { ...FORCE, changes: true });
          assert.deepEqual(fs.readFileSync(indexFile), bytes, 'the index was rewritten');
          assert.equal(fs.statSync(indexFile).mtimeMs, mtime, 'the index was touched');
          return s;
        },
      });
      assert.equal(summary.watch.settled, true);
      assert.equal(summary.watch.known, summary.entries);
      assert.ok(summary.entries > 30, 'the fixture has entries');
      assert.deepEqual(
        [summary.files, summary.symlinks, summary.created, summary.updated, summary.deleted],
        [0, 0, 0, 0, 0],
      );
      assert.deepEqual(summary.changes, { created: [], updated: [], deleted: [] });
      assert.equal(git(twins.pc, ['status', '--porcelain']), '');
    } finally {
      await engine.close();
    }
  });

  const CASES = {
    'content edited in place, same size, times put back': (d) =>
      editKeepingSizeAndTimes(abs(d, KEEP_FILES[0])),
    'a file deleted': (d) => fs.rmSync(abs(d, KEEP_FILES[1])),
    'an exec bit changed': (d) => fs.chmodSync(abs(d, KEEP_FILES[2]), 0o755),
    'an untracked file added (kept, as git keeps it)': (d) =>
      fs.writeFileSync(abs(d, 'same/sub/untracked.txt'), 'mine\n'),
    'a directory renamed away and back with an edit inside': (d) => {
      fs.renameSync(abs(d, 'same/sub'), abs(d, 'same/sub.tmp'));
      fs.appendFileSync(abs(d, 'same/sub.tmp/deeper/k.txt'), 'edited\n');
      fs.renameSync(abs(d, 'same/sub.tmp'), abs(d, 'same/sub'));
    },
    'a symlink retargeted': (d) => {
      fs.rmSync(abs(d, 'same/link'));
      fs.symlinkSync('keep-1.txt', abs(d, 'same/link'));
    },
    'the index changed by git (an entry removed)': (d) =>
      git(d, ['rm', '-q', '--cached', KEEP_FILES[3]]),
    'HEAD moved to a commit of another tree': (d) => git(d, ['reset', '-q', '--soft', 'A']),
  };
  for (const [name, mutate] of Object.entries(CASES)) {
    test(name, () => afterChange(src, mutate));
  }

  test('another branch of the same tree: settled, HEAD moves, the hook runs as git runs it', async () => {
    const hook = (d) => {
      git(d, ['branch', 'B2', 'B']);
      const file = abs(d, '.git/hooks/post-checkout');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, '#!/bin/sh\necho "$@" >> .git/hook-args\n', { mode: 0o755 });
    };
    const { twins, engine } = await primed(src);
    try {
      hook(twins.git);
      hook(twins.pc);
      const { summary } = await compareTwins(twins, {
        op: { ref: 'B2' },
        localChanges: false,
        run: (dir) => engine.checkout(dir, { ...FORCE, force: false, ref: 'B2' }),
      });
      assert.equal(summary.watch.settled, true);
      assert.equal(summary.ref, 'refs/heads/B2');
      assert.equal(
        fs.readFileSync(abs(twins.pc, '.git/hook-args'), 'utf8'),
        fs.readFileSync(abs(twins.git, '.git/hook-args'), 'utf8'),
      );
    } finally {
      await engine.close();
    }
  });

  test('a switch records what it knows: a later forced checkout trusts it, and sees an edit', async () => {
    const { twins, engine } = await primed(src);
    try {
      // Kept across the switch (git keeps a local change to a file the switch does not touch).
      const edit = (d) => fs.appendFileSync(abs(d, KEEP_FILES[4]), 'kept local change\n');
      edit(twins.git);
      edit(twins.pc);
      // (Not through compareTwins: its git status would rewrite the index, and a record is
      // only trusted for the index file it was made for.)
      git(twins.git, ['checkout', '-q', 'A', '--']);
      const switched = await engine.checkout(twins.pc, { ...FORCE, force: false, ref: 'A' });
      assert.ok(switched.watch.known > 0);
      const { summary } = await compareTwins(twins, {
        op: { force: true },
        run: (dir) => engine.checkout(dir, FORCE),
      });
      assert.ok(summary.watch.known > 0, 'the switch left nothing to trust');
      assert.equal(summary.watch.settled, false);
      assert.equal(git(twins.pc, ['status', '--porcelain', '--untracked-files=no']), '');
    } finally {
      await engine.close();
    }
  });

  test('core.splitIndex turned on between calls: not settled, the index written as git writes it', async () => {
    const { twins, engine } = await primed(src);
    try {
      for (const d of [twins.git, twins.pc]) git(d, ['config', 'core.splitIndex', 'true']);
      const { summary } = await compareTwins(twins, {
        op: { force: true },
        localChanges: false,
        run: (dir) => engine.checkout(dir, FORCE),
      });
      assert.equal(summary.watch.settled, false);
      const shared = (d) =>
        fs.readdirSync(abs(d, '.git')).some((f) => f.startsWith('sharedindex.'));
      assert.equal(shared(twins.pc), shared(twins.git), 'split like git, or not split like git');
    } finally {
      await engine.close();
    }
  });

  test('a held index.lock stops a settled call as any other', async () => {
    const { twins, engine } = await primed(src);
    try {
      const lock = abs(twins.pc, '.git/index.lock');
      fs.writeFileSync(lock, '');
      await assert.rejects(engine.checkout(twins.pc, FORCE), { code: 'ERR_INDEX_LOCKED' });
      fs.rmSync(lock);
      const s = await engine.checkout(twins.pc, FORCE);
      assert.equal(s.watch.settled, true);
    } finally {
      await engine.close();
    }
  });

  test('a sparse checkout is never settled (its patterns are a file no watch sees)', async () => {
    const twins = await makeTwins(src, { at: 'B' });
    const engine = createEngine({ workers: 2 });
    try {
      for (const d of [twins.git, twins.pc]) {
        git(d, ['config', 'core.sparseCheckout', 'true']);
        fs.writeFileSync(abs(d, '.git/info/sparse-checkout'), '/*\n');
      }
      for (let i = 0; i < 3; i++) {
        const s = await engine.checkout(twins.pc, FORCE);
        assert.equal(s.watch.settled, false);
      }
      // Patterns narrowed between calls: the next call applies them, as git does.
      for (const d of [twins.git, twins.pc]) {
        fs.writeFileSync(abs(d, '.git/info/sparse-checkout'), '/*\n!/same/\n');
      }
      await compareTwins(twins, {
        op: { force: true },
        localChanges: false,
        run: (dir) => engine.checkout(dir, FORCE),
      });
      assert.equal(fs.existsSync(abs(twins.pc, KEEP_FILES[0])), false);
    } finally {
      await engine.close();
    }
  });

  // As in watch.test.mjs: a low max_queued_events for the engine's instance, then more events
  // than it holds.
  test('events lost in an overflow: not settled', { skip: queueSkip }, async () => {
    const { twins, engine } = await withQueueLimit(16, () => primed(src));
    try {
      const mutate = (d) => {
        // ~200 events in a millisecond or two: more than 16 between any two of the engine's
        // reads of its queue (every 20 ms); one file after another, so none are merged.
        for (let round = 0; round < 8; round++)
          for (const f of KEEP_FILES) fs.appendFileSync(abs(d, f), 'edited\n');
      };
      mutate(twins.git);
      mutate(twins.pc);
      const { summary } = await compareTwins(twins, {
        op: { force: true },
        run: (dir) => engine.checkout(dir, FORCE),
      });
      assert.equal(summary.watch.settled, false);
      assert.equal(summary.watch.known, 0, 'trusted a record past lost events');
    } finally {
      await engine.close();
    }
  });

  test('a materialized target settles too, and an edit in it is put right', async () => {
    const engine = createEngine({ workers: 2 });
    const target = tmpPath('settled-target');
    try {
      const op = { racyWait: false, ref: 'B' };
      let s;
      for (let i = 0; i < 3 && !s?.watch.settled; i++)
        s = await engine.materialize(src.dir, target, op);
      assert.equal(s.watch.settled, true, 'three materializations with nothing changed');
      const rel = KEEP_FILES[5];
      fs.appendFileSync(abs(target, rel), 'edited\n');
      const after = await engine.materialize(src.dir, target, op);
      assert.equal(after.watch.settled, false);
      assert.equal(after.files, 1);
      assert.deepEqual(
        fs.readFileSync(abs(target, rel)),
        git(src.dir, ['show', `B:${rel}`], { encoding: 'buffer' }),
      );
    } finally {
      await engine.close();
      fs.rmSync(target, { recursive: true, force: true });
    }
  });
});
