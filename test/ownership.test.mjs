// git's ownership rule (safe.directory): a repository owned by another user is refused by git
// 2.39 with "detected dubious ownership" (exit 128) unless safe.directory in the system, global
// or command-line config allows it; root is judged by SUDO_UID when root does not own it.
// pcheckout must refuse exactly when git refuses, with git's wording, before it reads the
// repository's config, runs its hook or its filter driver — for checkout, switch, restore and
// materialize — and proceed exactly when git proceeds.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, materialize, PcheckoutError } from '../dist/index.js';
import { git, gitEnv, gitTry, Repo, tmpDir, tmpPath } from './helpers/git.mjs';

const CLI = path.resolve('dist/cli.cjs');
const NOBODY = 65534;
const isRoot = process.geteuid?.() === 0;
const GLOBAL = path.join(gitEnv.HOME, '.gitconfig');

/** A repository with a post-checkout hook and a smudge filter that both leave a trace. */
function hostileRepo() {
  const repo = Repo.init('owned');
  const trace = tmpPath('trace');
  repo.write('.gitattributes', '*.f filter=spy\n');
  repo.write('a.f', 'filtered\n');
  repo.write('plain.txt', 'one\n');
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'one');
  repo.git('branch', 'other');
  repo.write('plain.txt', 'two\n');
  repo.write('b.f', 'more\n');
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'two');
  repo.git('config', 'filter.spy.smudge', `sh -c 'echo filter >> ${trace}; cat'`);
  repo.git('config', 'filter.spy.clean', 'cat');
  const hook = path.join(repo.gitDir, 'hooks', 'post-checkout');
  fs.writeFileSync(hook, `#!/bin/sh\necho hook >> ${trace}\n`, { mode: 0o755 });
  return { repo, trace };
}

function chownTree(dir, uid) {
  const r = spawnSync('chown', ['-R', `${uid}:${uid}`, dir]);
  assert.equal(r.status, 0, `chown: ${r.stderr}`);
}

const traced = (trace) => (fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '');

async function caught(p) {
  try {
    await p;
  } catch (err) {
    return err;
  }
  return undefined;
}

/** git's refusal text without its "fatal: " and last newline, or null when git proceeds. */
function gitRefusal(cwd, args, env = {}) {
  const r = gitTry(cwd, args, { env });
  if (r.status === 0) return null;
  assert.equal(r.status, 128, `git ${args.join(' ')}: ${r.stderr}`);
  assert.match(r.stderr, /^fatal: detected dubious ownership/, r.stderr);
  return r.stderr.replace(/^fatal: /, '').replace(/\n$/, '');
}

/** Runs `fn` with process.env changed as `env` says (undefined deletes), then restores it. */
async function withEnv(env, fn) {
  const saved = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function setGlobalSafe(values) {
  fs.writeFileSync(GLOBAL, values.map((v) => `[safe]\n\tdirectory = ${v}\n`).join(''));
}

describe('git ownership rule (safe.directory)', { skip: !isRoot && 'needs root to chown' }, () => {
  if (!isRoot) process.stderr.write('ownership.test: skipped: needs root for chown\n');
  let repo;
  let trace;
  before(() => {
    ({ repo, trace } = hostileRepo());
    git(repo.dir, ['checkout', '-q', 'main']);
    chownTree(repo.dir, NOBODY);
    fs.rmSync(trace, { force: true });
  });

  const operations = [
    [
      'checkout (switch)',
      (dir) => checkout(dir, { ref: 'other', racyWait: false }),
      ['checkout', 'other'],
    ],
    [
      'checkout --force',
      (dir) => checkout(dir, { force: true, racyWait: false }),
      ['checkout', '-f'],
    ],
    [
      'restore',
      (dir) => checkout(dir, { restore: true, racyWait: false }),
      ['checkout-index', '-a', '-f'],
    ],
    [
      'materialize',
      (dir) => materialize(dir, tmpPath('mat'), { ref: 'main', racyWait: false }),
      ['archive', 'main'],
    ],
  ];

  for (const [name, run, gitArgs] of operations) {
    test(`${name}: refused like git, same words, no hook or filter run`, async () => {
      fs.rmSync(GLOBAL, { force: true });
      const expected = gitRefusal(repo.dir, gitArgs);
      assert.ok(expected, 'git proceeded on a repository owned by nobody');
      const before = fs.readFileSync(path.join(repo.gitDir, 'index'));
      const err = await caught(run(repo.dir));
      assert.ok(err instanceof PcheckoutError, `expected a refusal, got ${err}`);
      assert.equal(err.code, 'ERR_DUBIOUS_OWNERSHIP');
      assert.equal(err.message, expected);
      assert.equal(traced(trace), '', 'a hook or filter ran');
      assert.deepEqual(fs.readFileSync(path.join(repo.gitDir, 'index')), before, 'index changed');
    });
  }

  test('safe.directory names it: every operation proceeds, as git does, hook and filter run', async () => {
    setGlobalSafe([repo.dir]);
    try {
      for (const [name, run, gitArgs] of operations) {
        const r = gitTry(repo.dir, gitArgs);
        assert.equal(r.status, 0, `git ${gitArgs.join(' ')}: ${r.stderr}`);
        fs.rmSync(trace, { force: true });
        await run(repo.dir);
        if (name.startsWith('checkout')) assert.match(traced(trace), /hook/, name);
        if (name === 'materialize') assert.match(traced(trace), /filter/, name);
      }
      git(repo.dir, ['checkout', '-q', '-f', 'main']);
      assert.equal(git(repo.dir, ['status', '--porcelain']), '');
    } finally {
      fs.rmSync(GLOBAL, { force: true });
      fs.rmSync(trace, { force: true });
    }
  });

  test("the CLI: exit 128 and git's first line", () => {
    const r = spawnSync(process.execPath, [CLI, repo.dir, 'other'], { encoding: 'utf8' });
    assert.equal(r.status, 128, r.stderr);
    assert.match(r.stderr, new RegExp(`detected dubious ownership in repository at '${repo.dir}'`));
    assert.match(r.stderr, /git config --global --add safe\.directory /);
    assert.equal(traced(trace), '');
  });

  test('from a subdirectory and through a symlink: the real top is named, as by git', async () => {
    fs.rmSync(GLOBAL, { force: true });
    const link = path.join(tmpDir('links'), 'via');
    fs.symlinkSync(repo.dir, link);
    for (const start of [path.join(repo.dir, 'sub'), link]) {
      fs.mkdirSync(path.join(repo.dir, 'sub'), { recursive: true });
      const expected = gitRefusal(start, ['checkout', 'other']);
      assert.ok(expected?.includes(`'${fs.realpathSync(repo.dir)}'`), expected ?? 'git proceeded');
      const err = await caught(checkout(start, { ref: 'other', racyWait: false }));
      assert.equal(err?.code, 'ERR_DUBIOUS_OWNERSHIP', `${err}`);
      assert.equal(err.message, expected);
      fs.rmSync(path.join(repo.dir, 'sub'), { recursive: true });
    }
    // safe.directory names the real path: the symlinked spelling does not count, for git either.
    setGlobalSafe([link]);
    assert.ok(gitRefusal(link, ['checkout', 'other']), 'git took the symlinked spelling');
    assert.equal(
      (await caught(checkout(link, { ref: 'other', racyWait: false })))?.code,
      'ERR_DUBIOUS_OWNERSHIP',
    );
    fs.rmSync(GLOBAL, { force: true });
  });

  const values = [
    // [safe.directory values in the global config, whether git 2.39 then proceeds]
    [[`${'REPO'}/`], false],
    [[`${path.dirname('REPO/x')}/*`], false],
    [['REPO/.git'], false],
    [['*', ''], false],
    [['REPO', ''], false],
    [['', 'REPO'], true],
    [['*'], true],
    [['REPO'], true],
  ];
  for (const [list, proceeds] of values) {
    test(`safe.directory = ${JSON.stringify(list)}: ${proceeds ? 'allowed' : 'refused'}, as by git`, async () => {
      setGlobalSafe(list.map((v) => v.replace('REPO', repo.dir)));
      try {
        const refused = gitRefusal(repo.dir, ['rev-parse', 'HEAD']);
        assert.equal(refused === null, proceeds, `git 2.39 ${refused ? 'refused' : 'proceeded'}`);
        const err = await caught(checkout(repo.dir, { restore: true, racyWait: false }));
        if (proceeds) assert.equal(err, undefined, `${err}`);
        else assert.equal(err?.code, 'ERR_DUBIOUS_OWNERSHIP', `${err}`);
      } finally {
        fs.rmSync(GLOBAL, { force: true });
      }
    });
  }

  test("the repository's own config cannot allow itself; -c can", async () => {
    fs.rmSync(GLOBAL, { force: true });
    const config = path.join(repo.gitDir, 'config');
    const saved = fs.readFileSync(config);
    fs.appendFileSync(config, `[safe]\n\tdirectory = *\n`);
    try {
      assert.ok(gitRefusal(repo.dir, ['rev-parse', 'HEAD']), 'git trusted the local config');
      const err = await caught(checkout(repo.dir, { restore: true, racyWait: false }));
      assert.equal(err?.code, 'ERR_DUBIOUS_OWNERSHIP', `${err}`);
    } finally {
      fs.writeFileSync(config, saved);
    }
    const params = { GIT_CONFIG_PARAMETERS: `'safe.directory'='${repo.dir}'` };
    assert.equal(gitRefusal(repo.dir, ['rev-parse', 'HEAD'], params), null);
    await withEnv(params, () => checkout(repo.dir, { restore: true, racyWait: false }));
  });

  test("root under sudo: judged as SUDO_UID's user, as git does", async () => {
    fs.rmSync(GLOBAL, { force: true });
    for (const [uid, proceeds] of [
      [String(NOBODY), true],
      ['1234', false],
    ]) {
      const env = { SUDO_UID: uid };
      const refused = gitRefusal(repo.dir, ['rev-parse', 'HEAD'], env);
      assert.equal(refused === null, proceeds, `git with SUDO_UID=${uid}`);
      const err = await withEnv(env, () =>
        caught(checkout(repo.dir, { restore: true, racyWait: false })),
      );
      if (proceeds) assert.equal(err, undefined, `${err}`);
      else assert.equal(err?.code, 'ERR_DUBIOUS_OWNERSHIP', `${err}`);
    }
  });

  test('only the git directory owned by another user: refused too; allowed, both run hook and filter', async () => {
    const { repo: r, trace: t } = hostileRepo();
    chownTree(r.gitDir, NOBODY);
    fs.rmSync(t, { force: true });
    const expected = gitRefusal(r.dir, ['checkout', 'other']);
    assert.ok(expected, 'git proceeded');
    const err = await caught(checkout(r.dir, { ref: 'other', racyWait: false }));
    assert.equal(err?.message, expected);
    // Allowed: git and pcheckout both run the hook and the filter; their twins agree.
    setGlobalSafe([r.dir]);
    try {
      const twin = Repo.init('twin');
      fs.rmSync(twin.dir, { recursive: true });
      fs.cpSync(r.dir, twin.dir, { recursive: true });
      chownTree(twin.gitDir, NOBODY);
      setGlobalSafe([r.dir, twin.dir]);
      git(twin.dir, ['checkout', '-q', 'other']);
      const gitTrace = traced(t);
      fs.rmSync(t, { force: true });
      await checkout(r.dir, { ref: 'other', racyWait: false });
      assert.equal(traced(t), gitTrace);
      assert.match(gitTrace, /hook/);
      assert.equal(git(r.dir, ['status', '--porcelain']), '');
    } finally {
      fs.rmSync(GLOBAL, { force: true });
    }
  });
});
