// Nothing ends the process abnormally, and every lock taken is released: a process that exits
// while pool workers write, a checkout that runs out of file descriptors at any step, and
// the signals a terminal sends (SIGHUP, SIGQUIT as SIGINT, SIGTERM). Each runs in a child
// process, so an abort (exit 134) is a failed assertion, not a dead test file.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';
import { Repo, buildFlatRepo, freshClone, git, gitEnv, gitOut } from './helpers/git.mjs';
import { CLI, DIST_INDEX, runCli } from './helpers/run.mjs';

const require = createRequire(import.meta.url);

/** Runs `code` (an ES module) in a child node: { status, signal, stdout, stderr }. */
function runChild(code, { args = [], env = {}, prefix = [] } = {}) {
  const argv = [...prefix, process.execPath, '--input-type=module', '-e', code, '--', ...args];
  const r = spawnSync(argv[0], argv.slice(1), {
    env: { ...gitEnv, PCHECKOUT_TEST_DIST: DIST_INDEX, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return r;
}

function describeRun(r) {
  return `status ${r.status}, signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr.slice(0, 1500)}`;
}

/** The lock files left in a repository's git directory. */
function locksIn(dir) {
  return fs.readdirSync(path.join(dir, '.git')).filter((n) => n.endsWith('.lock'));
}

function hasCommand(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

describe('the process exits while the pool writes', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(400, { prefix: 'exit-mid-write' });
  });

  // process.exit() from the second progress report: the other worker is still writing when
  // its thread is torn down. An exception the addon cannot throw into a dying environment
  // used to end in std::terminate (exit 134, "terminate called after throwing an instance of
  // 'Napi::Error'") about two times in three; four runs in a row catch that.
  const EXIT_MID_WRITE = `
    const { checkout } = await import(process.env.PCHECKOUT_TEST_DIST);
    let reports = 0;
    await checkout(process.argv[1], {
      workers: 2,
      threshold: 0,
      racyWait: false,
      onProgress: () => {
        if (++reports === 2) process.exit(3);
      },
    });
    process.exit(4); // finished before the second report: the test is not testing anything
  `;
  test('no abort, no lock left, four times out of four', () => {
    for (let i = 0; i < 4; i++) {
      const dir = freshClone(repo);
      const r = runChild(EXIT_MID_WRITE, { args: [dir] });
      assert.equal(r.signal, null, describeRun(r));
      assert.equal(r.status, 3, describeRun(r));
      assert.doesNotMatch(r.stderr, /terminate called/, describeRun(r));
      assert.deepEqual(locksIn(dir), [], 'a lock was left behind');
    }
  });
});

describe('a low file-descriptor limit', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(150, { prefix: 'low-nofile' });
  });

  // Under a limit of 256, the child loads everything, then takes every free descriptor but
  // `argv[2]`. The writer threads share one mapping of each pack, so a checkout needs only a
  // handful of descriptors; with fewer, whichever step runs out first must fail with a coded
  // error that names EMFILE, and leave no lock and no index behind.
  const FEW_FDS = `
    import fs from 'node:fs';
    const { checkout, PcheckoutError } = await import(process.env.PCHECKOUT_TEST_DIST);
    const held = [];
    try {
      for (;;) held.push(fs.openSync('/dev/null', 'r'));
    } catch {}
    for (let i = 0; i < Number(process.argv[2]); i++) fs.closeSync(held.pop());
    try {
      const s = await checkout(process.argv[1], { workers: 8, threshold: 0, racyWait: false });
      console.log(JSON.stringify({ ok: true, pool: s.pool }));
    } catch (err) {
      console.log(JSON.stringify({ ok: false, pcheckout: err instanceof PcheckoutError, code: err.code, message: err.message }));
    }
  `;
  test(
    'every shortfall is a coded error naming EMFILE, no lock left, no index; enough succeeds',
    { skip: hasCommand('prlimit') ? false : 'prlimit (util-linux) is not installed' },
    () => {
      const outcomes = [];
      for (const free of [0, 1, 2, 3, 5, 8, 64]) {
        const dir = freshClone(repo);
        const r = runChild(FEW_FDS, {
          args: [dir, String(free)],
          prefix: ['prlimit', '--nofile=256:256', '--'],
        });
        assert.equal(r.signal, null, describeRun(r));
        assert.equal(r.status, 0, describeRun(r));
        const out = JSON.parse(r.stdout.trim().split('\n').pop());
        outcomes.push(out);
        assert.deepEqual(locksIn(dir), [], `a lock was left behind with ${free} free: ${r.stdout}`);
        if (out.ok) {
          assert.equal(gitOut(dir, 'status', '--porcelain'), '', `not clean with ${free} free`);
          continue;
        }
        assert.ok(out.pcheckout, `not a PcheckoutError with ${free} free: ${r.stdout}`);
        assert.match(out.code, /^ERR_(IO|BAD_CONFIG)$/, r.stdout);
        assert.match(out.message, /EMFILE|too many open files/i, r.stdout);
        assert.ok(
          !fs.existsSync(path.join(dir, '.git', 'index')),
          `an index was written with ${free} free`,
        );
      }
      assert.equal(outcomes[0].ok, false, 'no descriptor at all, and the checkout succeeded');
      assert.equal(
        outcomes.at(-1).ok,
        true,
        `64 free descriptors were not enough: ${JSON.stringify(outcomes.at(-1))}`,
      );
      assert.equal(outcomes.at(-1).pool.workers, 8);
      // Where the writer is the step that runs out, the message says what to do about it.
      const writer = outcomes.find((o) => !o.ok && /writing files/.test(o.message));
      assert.ok(writer, `no shortfall reached the writer: ${JSON.stringify(outcomes)}`);
      assert.match(writer.message, /ulimit -n/);
    },
  );
});

describe('signals stop the CLI cleanly', () => {
  let src;
  before(() => {
    src = Repo.init('signals');
    for (let i = 0; i < 300; i++) src.write(`f/${i % 10}/file-${i}.txt`, `main ${i}\n`);
    src.commit('main');
    git(src.dir, ['checkout', '-q', '-b', 'other']);
    for (let i = 0; i < 300; i++) src.write(`f/${i % 10}/file-${i}.txt`, `other ${i}\n`);
    src.commit('other');
    git(src.dir, ['checkout', '-q', 'main']);
  });

  // The CLI switches main -> other and sends itself the signal at its second kill point (its
  // locks are taken and the plan is made; see src/kill-point.ts): it must stop, release
  // index.lock and HEAD.lock, leave HEAD and the index as they were, and exit 128 + signal.
  for (const signal of ['SIGHUP', 'SIGQUIT', 'SIGINT', 'SIGTERM']) {
    test(`${signal}: index.lock and HEAD.lock released, HEAD and index unchanged`, () => {
      const dir = freshClone(src);
      git(dir, ['checkout', '-q', 'main']);
      git(dir, ['branch', '-q', 'other', 'origin/other']);
      const index = fs.readFileSync(path.join(dir, '.git', 'index'));
      const r = spawnSync(
        process.execPath,
        [CLI, '--workers', '2', '--threshold', '0', '--racy-wait=never', dir, 'other'],
        {
          env: {
            ...gitEnv,
            PCHECKOUT_TEST_KILL_AT: '2',
            PCHECKOUT_TEST_KILL_SIGNAL: signal,
          },
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
      assert.equal(r.status, 128 + os.constants.signals[signal], r.stderr);
      assert.match(r.stderr, new RegExp(`ERR_ABORTED.*interrupted by ${signal}`));
      assert.deepEqual(locksIn(dir), [], 'a lock was left behind');
      assert.equal(gitOut(dir, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
      assert.ok(fs.readFileSync(path.join(dir, '.git', 'index')).equals(index), 'index changed');
      // git can carry on from there.
      assert.equal(runCli(['--force', '--racy-wait=never', dir, 'other']).status, 0);
      assert.equal(gitOut(dir, 'status', '--porcelain'), '');
    });
  }
});
