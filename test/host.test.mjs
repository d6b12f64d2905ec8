// A host-friendly engine: calls run on orchestrator threads, not the caller's (nothing of a call
// happens before checkout() returns its promise); calls on different worktrees run at once and
// calls on one worktree queue; an abort lands wherever the call is, and what it leaves is what
// git leaves; a dry run says what a call would change (against git diff --name-status) and
// touches nothing; `changes: true` returns the same paths from the real call; ERR_WOULD_OVERWRITE
// keeps git's groups apart. (How long the caller's event loop stalls is measured in
// bench/host.mjs, not asserted here.)

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkout, createEngine, materialize, PcheckoutError } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone, git, gitOut, gitTry, tmpPath } from './helpers/git.mjs';
import { runCli, targetState } from './helpers/run.mjs';

const OPTS = { racyWait: false };

/** A repository with two commits: main~1, and main editing, adding and deleting files. */
function twoCommits(prefix) {
  const src = buildFlatRepo(120, { prefix });
  for (let i = 0; i < 120; i += 7)
    src.write(`f/${Math.floor(i / 25)}/file-${i}.txt`, `edit ${i}\n`);
  for (let i = 3; i < 120; i += 29) src.rm(`f/${Math.floor(i / 25)}/file-${i}.txt`);
  src.write('new/a.txt', 'a\n');
  src.write('new/deep/b.txt', 'b\n');
  src.commit('edits');
  git(src.dir, ['repack', '-adq']);
  return src;
}

/** git diff --name-status of two revisions, as the three lists a call reports. */
function gitChanges(dir, from, to) {
  const out = { created: [], updated: [], deleted: [] };
  const text = execFileSync(
    'git',
    ['-C', dir, 'diff', '--no-renames', '--name-status', '-z', from, to],
    {
      encoding: 'utf8',
    },
  );
  const parts = text.split('\0').filter((p) => p !== '');
  for (let k = 0; k < parts.length; k += 2) {
    const list = { A: out.created, M: out.updated, T: out.updated, D: out.deleted }[parts[k]];
    list.push(parts[k + 1]);
  }
  return out;
}

/** A post-checkout hook that waits for a line on a FIFO before it lets its call end. */
function holdingHook(dir, fifo) {
  const hook = path.join(dir, '.git', 'hooks', 'post-checkout');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(hook, `#!/bin/sh\nread line < '${fifo}'\n`, { mode: 0o755 });
}

/** A post-checkout hook that writes a line to a FIFO. */
function releasingHook(dir, fifo) {
  const hook = path.join(dir, '.git', 'hooks', 'post-checkout');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(hook, `#!/bin/sh\necho go > '${fifo}'\n`, { mode: 0o755 });
}

function mkfifo() {
  const fifo = tmpPath('fifo');
  execFileSync('mkfifo', [fifo]);
  return fifo;
}

describe('calls off the caller’s thread', () => {
  const src = twoCommits('host');

  test('nothing happens on the caller’s thread before checkout() returns its promise', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-async' });
    const before = targetState(dir);
    const pending = checkout(dir, OPTS);
    // The old engine opened the repository, took index.lock and walked the tree right here.
    assert.deepEqual(targetState(dir), before, 'the call touched the worktree synchronously');
    await pending;
    assertMatchesGit(dir, src.dir);
  });

  test('calls on different worktrees run at once, on one engine and through the API', async () => {
    for (const via of ['engine', 'api']) {
      const engine = via === 'engine' ? createEngine({ workers: 2 }) : null;
      const co = engine ? engine.checkout.bind(engine) : checkout;
      try {
        const a = freshClone(src.dir, { prefix: `host-par-a-${via}` });
        const b = freshClone(src.dir, { prefix: `host-par-b-${via}` });
        const fifo = mkfifo();
        // a's call cannot end before b's hook has run: one after the other, it never would.
        holdingHook(a, fifo);
        releasingHook(b, fifo);
        const [sa, sb] = await Promise.all([co(a, OPTS), co(b, OPTS)]);
        assert.equal(sa.hook?.status, 0);
        assert.equal(sb.hook?.status, 0);
        // (git's own checkout in the comparison runs the hooks too.)
        for (const d of [a, b]) fs.rmSync(path.join(d, '.git', 'hooks', 'post-checkout'));
        assertMatchesGit(a, src.dir);
        assertMatchesGit(b, src.dir);
      } finally {
        await engine?.close();
      }
    }
  });

  test('calls on one worktree queue: each sees the one before it, none finds index.lock', async () => {
    for (const via of ['engine', 'api']) {
      const engine = via === 'engine' ? createEngine({ workers: 2 }) : null;
      const co = engine ? engine.checkout.bind(engine) : checkout;
      try {
        const dir = freshClone(src.dir, { prefix: `host-queue-${via}` });
        git(dir, ['branch', 'old', 'origin/main~1']);
        const calls = [
          co(dir, OPTS),
          co(dir, { ...OPTS, ref: 'old' }),
          co(path.join(dir, '.'), { ...OPTS, ref: 'main' }), // another spelling of the same worktree
          co(dir, { ...OPTS, ref: 'old' }),
        ];
        const results = await Promise.all(calls);
        assert.deepEqual(
          results.map((s) => s.mode),
          ['fresh', 'switch', 'switch', 'switch'],
        );
        assert.equal(results[1].ref, 'refs/heads/old');
        assert.equal(gitOut(dir, 'symbolic-ref', 'HEAD'), 'refs/heads/old');
        assert.equal(gitOut(dir, 'rev-parse', 'HEAD'), gitOut(src.dir, 'rev-parse', 'main~1'));
        assert.equal(gitTry(dir, ['status', '--porcelain']).stdout, '');
        assert.equal(gitTry(dir, ['diff', '--quiet', 'HEAD']).status, 0);
      } finally {
        await engine?.close();
      }
    }
  });

  test('a call waiting for its worktree is aborted at once; the call it waited for completes', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-wait-abort' });
    const fifo = mkfifo();
    holdingHook(dir, fifo);
    const engine = createEngine({ workers: 2 });
    try {
      let inHook;
      const hookReached = new Promise((resolve) => (inHook = resolve));
      // Held in its hook until the FIFO is written.
      const first = checkout(dir, {
        ...OPTS,
        onProgress: (p) => p.phase === 'hook' && inHook(),
      });
      const ac = new AbortController();
      const second = engine.checkout(dir, { ...OPTS, ref: 'main~1', signal: ac.signal });
      let firstDone = false;
      void first.then(() => (firstDone = true));
      ac.abort(new Error('no longer wanted'));
      await assert.rejects(second, (err) => {
        assert.ok(err instanceof PcheckoutError);
        assert.equal(err.code, 'ERR_ABORTED');
        assert.match(err.message, /no longer wanted/);
        return true;
      });
      assert.equal(firstDone, false, 'the aborted call waited for the one holding the worktree');
      // (Opening the FIFO blocks this thread until the hook reads it: only once it runs.)
      await hookReached;
      fs.writeFileSync(fifo, 'go\n');
      await first;
      fs.rmSync(path.join(dir, '.git', 'hooks', 'post-checkout'));
      assertMatchesGit(dir, src.dir);
    } finally {
      await engine.close();
    }
  });

  test('an abort in any phase leaves what git leaves; a forced re-run completes it', async () => {
    for (const phase of ['open', 'walk', 'plan', 'write', 'index']) {
      const dir = freshClone(src.dir, { prefix: `host-abort-${phase}` });
      const ac = new AbortController();
      let error;
      let summary;
      try {
        summary = await checkout(dir, {
          ...OPTS,
          workers: 2,
          threshold: 0,
          signal: ac.signal,
          onProgress: (p) => {
            if (p.phase === phase) ac.abort();
          },
        });
      } catch (err) {
        error = err;
      }
      assert.ok(!fs.existsSync(path.join(dir, '.git', 'index.lock')), 'index.lock left');
      if (error) {
        assert.ok(error instanceof PcheckoutError, String(error));
        assert.equal(error.code, 'ERR_ABORTED', error.message);
        // No index: git status lists every file of HEAD not written as deleted, nothing else.
        assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')), 'index written after abort');
      } else {
        // The abort came after the index was committed: the call is complete.
        assert.ok(['index'].includes(phase), `not aborted in phase ${phase}`);
        assertMatchesGit(dir, src.dir);
        assert.equal(summary.mode, 'fresh');
      }
      await checkout(dir, { ...OPTS, force: true });
      assertMatchesGit(dir, src.dir);
    }
  });

  test('a throwing onProgress still fails the call with ERR_CALLBACK, lock released', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-callback' });
    await assert.rejects(
      checkout(dir, {
        ...OPTS,
        onProgress: (p) => {
          if (p.phase === 'plan') throw new Error('bar broke');
        },
      }),
      (err) =>
        err instanceof PcheckoutError &&
        err.code === 'ERR_CALLBACK' &&
        /bar broke/.test(err.message),
    );
    assert.ok(!fs.existsSync(path.join(dir, '.git', 'index.lock')));
  });
});

describe('dry runs and changes', () => {
  const src = twoCommits('host-dry');

  test('a dry run of a switch lists what git diff lists and touches nothing', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-dry-switch' });
    git(dir, ['checkout', '-q', '-b', 'old', 'origin/main~1']);
    const indexFile = path.join(dir, '.git', 'index');
    const before = { ...targetState(dir), mtime: fs.statSync(indexFile).mtimeMs };
    const dry = await checkout(dir, { ...OPTS, ref: 'main', dryRun: true });
    assert.equal(dry.dryRun, true);
    assert.equal(dry.mode, 'switch');
    assert.equal(dry.stops, null);
    const expected = gitChanges(dir, 'HEAD', 'main');
    assert.deepEqual(dry.changes, expected);
    assert.deepEqual({ ...targetState(dir), mtime: fs.statSync(indexFile).mtimeMs }, before);
    // The real call changes exactly those paths, and says so.
    const real = await checkout(dir, { ...OPTS, ref: 'main', changes: true });
    assert.equal(real.dryRun, false);
    assert.deepEqual(real.changes, expected);
    assert.equal(real.created + real.updated, expected.created.length + expected.updated.length);
    assertMatchesGit(dir, src.dir, { ref: 'main' });
  });

  test('changes cross the thread as they are: names git quotes, and through an engine', async () => {
    const src = buildFlatRepo(3, { prefix: 'host-names' });
    src.write('ünïcödé/çà.txt', 'a\n');
    src.write('new\nline', 'b\n');
    src.write('tab\there "quoted"', 'c\n');
    src.commit('odd names');
    const dir = freshClone(src.dir, { prefix: 'host-names' });
    const fresh = await checkout(dir, { ...OPTS, changes: true });
    const all = gitOut(dir, 'ls-files', '-z')
      .split('\0')
      .filter((p) => p !== '');
    assert.deepEqual(fresh.changes, { created: all, updated: [], deleted: [] });
    git(dir, ['rm', '-q', 'new\nline']);
    git(dir, ['commit', '-q', '-m', 'drop one']);
    fs.writeFileSync(path.join(dir, 'ünïcödé/çà.txt'), 'changed\n');
    const engine = createEngine();
    try {
      const back = await engine.checkout(dir, {
        ...OPTS,
        ref: 'HEAD~1',
        force: true,
        changes: true,
      });
      assert.deepEqual(back.changes, {
        created: ['new\nline'],
        updated: ['ünïcödé/çà.txt'],
        deleted: [],
      });
      // Read again, spread and serialized: the same lists.
      assert.deepEqual({ ...back.changes }, back.changes);
      assert.deepEqual(JSON.parse(JSON.stringify(back)).changes, back.changes);
    } finally {
      await engine.close();
    }
  });

  test('a dry run with local changes: they stay, and are not listed as changed', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-dry-local' });
    git(dir, ['checkout', '-q', '-b', 'old', 'origin/main~1']);
    // A local edit of a file both commits share, and an untracked file: carried across.
    fs.writeFileSync(path.join(dir, 'f/0/file-1.txt'), 'mine\n');
    fs.writeFileSync(path.join(dir, 'untracked.txt'), 'u\n');
    const dry = await checkout(dir, { ...OPTS, ref: 'main', dryRun: true });
    assert.equal(dry.stops, null);
    assert.deepEqual(dry.changes, gitChanges(dir, 'HEAD', 'main'));
    const real = await checkout(dir, { ...OPTS, ref: 'main', changes: true });
    assert.deepEqual(real.changes, dry.changes);
    assert.equal(fs.readFileSync(path.join(dir, 'f/0/file-1.txt'), 'utf8'), 'mine\n');
    assert.deepEqual(gitTry(dir, ['status', '--porcelain']).stdout.trimEnd().split('\n').sort(), [
      ' M f/0/file-1.txt',
      '?? untracked.txt',
    ]);
  });

  test('what stops a checkout: a dry run reports it, git’s groups kept apart', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-dry-stops' });
    git(dir, ['checkout', '-q', '-b', 'old', 'origin/main~1']);
    fs.writeFileSync(path.join(dir, 'f/0/file-0.txt'), 'local edit\n'); // main edits it too
    fs.mkdirSync(path.join(dir, 'new'));
    fs.writeFileSync(path.join(dir, 'new/a.txt'), 'in the way\n'); // main adds it
    const before = targetState(dir);
    const dry = await checkout(dir, { ...OPTS, ref: 'main', dryRun: true });
    assert.equal(dry.changes, null);
    assert.equal(dry.stops.code, 'ERR_WOULD_OVERWRITE');
    assert.deepEqual(dry.stops.modified, ['f/0/file-0.txt']);
    assert.deepEqual(dry.stops.untracked, ['new/a.txt']);
    assert.deepEqual(dry.stops.paths, ['f/0/file-0.txt', 'new/a.txt']);
    // git refuses the same switch, naming the same paths in the same groups.
    const r = gitTry(dir, ['checkout', 'main']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /would be overwritten by checkout:\n\tf\/0\/file-0\.txt\n/);
    assert.match(
      r.stderr,
      /untracked working tree files would be overwritten[^\n]*\n\tnew\/a\.txt\n/,
    );
    assert.deepEqual(targetState(dir), before);
    await assert.rejects(checkout(dir, { ...OPTS, ref: 'main' }), (err) => {
      assert.equal(err.code, 'ERR_WOULD_OVERWRITE');
      assert.deepEqual(err.overwrite, {
        modified: ['f/0/file-0.txt'],
        untracked: ['new/a.txt'],
        overwritten: ['new/a.txt'],
        removed: [],
        directories: [],
      });
      assert.equal(err.message, dry.stops.message);
      return true;
    });
  });

  test('pcheckout --dry-run lists what git diff lists, or what stops the checkout', () => {
    const dir = freshClone(src.dir, { prefix: 'host-dry-cli' });
    git(dir, ['checkout', '-q', '-b', 'old', 'origin/main~1']);
    const before = targetState(dir);
    const r = runCli(['--dry-run', dir, 'main']);
    assert.equal(r.status, 0, r.stderr);
    const diff = git(dir, ['diff', '--no-renames', '--name-status', 'HEAD', 'main']);
    const sortLines = (t) => t.trimEnd().split('\n').sort();
    assert.deepEqual(sortLines(r.stdout), sortLines(diff));
    fs.writeFileSync(path.join(dir, 'f/0/file-0.txt'), 'local edit\n');
    const stopped = runCli(['--dry-run', dir, 'main']);
    assert.equal(stopped.status, 1);
    assert.match(stopped.stderr, /ERR_WOULD_OVERWRITE: Your local changes[^]*\tf\/0\/file-0\.txt/);
    assert.deepEqual(targetState(dir), { ...before, worktree: before.worktree });
  });

  test('a dry run of a fresh checkout and of a materialize into a new directory', async () => {
    const dir = freshClone(src.dir, { prefix: 'host-dry-fresh' });
    const all = gitOut(dir, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n');
    const dry = await checkout(dir, { ...OPTS, dryRun: true });
    assert.equal(dry.mode, 'fresh');
    assert.deepEqual(dry.changes, { created: all, updated: [], deleted: [] });
    assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')));
    assert.deepEqual(fs.readdirSync(dir), ['.git']);
    const target = tmpPath('host-dry-mat');
    const m = await materialize(src.dir, target, { ...OPTS, dryRun: true });
    assert.equal(m.mode, 'materialize');
    assert.deepEqual(m.changes.created, all);
    assert.ok(!fs.existsSync(target), 'a dry run made the target');
    // Into an existing materialized directory, after an edit: the edit is what it would undo.
    await materialize(src.dir, target, OPTS);
    fs.writeFileSync(path.join(target, 'f/0/file-2.txt'), 'edited\n');
    fs.rmSync(path.join(target, 'f/1/file-30.txt'));
    const again = await materialize(src.dir, target, { ...OPTS, dryRun: true });
    assert.deepEqual(again.changes, {
      created: [],
      updated: ['f/0/file-2.txt', 'f/1/file-30.txt'],
      deleted: [],
    });
    assert.equal(fs.readFileSync(path.join(target, 'f/0/file-2.txt'), 'utf8'), 'edited\n');
  });
});

describe('warm calls cost what they change', () => {
  const src = twoCommits('host-warm');

  test('a no-op refresh leaves the index file as it is; a real change rewrites it', async () => {
    const engine = createEngine({ workers: 2 });
    try {
      const target = tmpPath('host-warm-mat');
      await engine.materialize(src.dir, target, { ...OPTS, racyWait: true });
      const index = path.join(target, '.git', 'index');
      const before = fs.statSync(index, { bigint: true });
      const bytes = fs.readFileSync(index);
      const again = await engine.materialize(src.dir, target, OPTS);
      assert.equal(again.files + again.created + again.updated + again.deleted, 0);
      const after = fs.statSync(index, { bigint: true });
      assert.equal(after.mtimeNs, before.mtimeNs, 'a no-op refresh rewrote the index');
      assert.equal(after.ino, before.ino);
      assert.ok(fs.readFileSync(index).equals(bytes));
      assert.ok(!fs.existsSync(`${index}.lock`));
      // git reads the materialized tree as clean against that index.
      const status = gitTry(src.dir, ['--work-tree', target, 'status', '--porcelain'], {
        env: { GIT_INDEX_FILE: index },
      });
      assert.equal(status.stdout, '', status.stderr);
      fs.writeFileSync(path.join(target, 'f/0/file-1.txt'), 'edited\n');
      const fixed = await engine.materialize(src.dir, target, OPTS);
      assert.equal(fixed.files, 1);
      assert.notEqual(fs.statSync(index, { bigint: true }).ino, before.ino, 'not rewritten');
    } finally {
      await engine.close();
    }
  });
});
