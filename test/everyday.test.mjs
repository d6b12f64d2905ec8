// git's everyday rules, each compared with git in twin repositories: the local branch created
// from its remote-tracking branch, a branch held by another worktree refused, a tree refused,
// the command line (-C, a single argument, --), GIT_DIR / GIT_WORK_TREE, core.sharedRepository
// modes, the index version git writes, and the post-checkout hook.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { loadAddon } from '../dist/addon.js';
import { Refs, resolveRevision } from '../dist/repo/refs.js';
import { openRepo } from '../dist/repo/repo.js';
import { ROOT, Repo, git, gitEnv, gitOut, gitTry, tmpDir, tmpPath } from './helpers/git.mjs';
import { assertSameCheckout, observe, twins } from './helpers/rules.mjs';
import { CLI, assertRejectsWith, runCli, targetState } from './helpers/run.mjs';

/** main (3 files) and topic (one more file); tag vtree names main's tree. */
function buildUpstream() {
  const r = Repo.init('everyday');
  r.write('a.txt', 'a\n').write('dir/b.txt', 'b\n').write('run.sh', '#!/bin/sh\n', { exec: true });
  r.commit('c1');
  r.branch('topic');
  r.switchTo('topic');
  r.write('topic.txt', 'topic\n');
  r.commit('t1');
  r.switchTo('main');
  git(r.dir, ['tag', '-a', '-m', 'a tree', 'vtree', 'main^{tree}']);
  return r;
}

/** `git clone --no-checkout` of `src`, twice: the state a user checks out from. */
function clonedTwins(src, prefix, { configure } = {}) {
  const base = tmpPath(prefix);
  git(ROOT, ['clone', '-q', '--no-checkout', src.dir, base]);
  fs.rmSync(path.join(base, '.git', 'hooks'), { recursive: true, force: true });
  configure?.(base);
  return twins(base, prefix);
}

function gitDirFile(dir, rel) {
  return fs.readFileSync(path.join(dir, '.git', rel), 'utf8');
}

/** Runs the CLI with extra environment (runCli only takes cwd). */
function runCliEnv(args, { cwd, env }) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...gitEnv, ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('everyday rules', () => {
  let upstream;
  before(() => {
    upstream = buildUpstream();
  });

  describe('a name only a remote has: the local branch tracking it is created', () => {
    test('ref, branch.<name>.remote/merge, both reflogs and the message, as git', () => {
      const { gitDir, ourDir } = clonedTwins(upstream, 'track');
      const g = gitTry(gitDir, ['checkout', 'topic']);
      assert.equal(g.status, 0, g.stderr);
      const r = runCli(['topic'], { cwd: ourDir });
      assert.equal(r.status, 0, r.stderr);
      assertSameCheckout(ourDir, gitDir, 'checkout topic');
      assert.equal(gitDirFile(ourDir, 'config'), gitDirFile(gitDir, 'config'), '.git/config');
      const log = (dir) =>
        gitDirFile(dir, 'logs/refs/heads/topic')
          .split('\n')
          .map((l) => l.replace(/ [^\t]*\t/, ' <ident>\t'));
      assert.deepEqual(log(ourDir), log(gitDir), 'logs/refs/heads/topic');
      const tracking = "branch 'topic' set up to track 'origin/topic'.";
      assert.equal(g.stdout, `${tracking}\n`);
      assert.equal(r.stdout, `${tracking}\n`);
      assert.ok(!fs.existsSync(path.join(ourDir, '.git', 'config.lock')));
    });

    test('two remotes have it: refused as git refuses; checkout.defaultRemote picks one', async () => {
      const { gitDir, ourDir } = clonedTwins(upstream, 'track2', {
        configure: (dir) => {
          git(dir, ['remote', 'add', 'other', upstream.dir]);
          git(dir, ['fetch', '-q', 'other']);
        },
      });
      const g = gitTry(gitDir, ['checkout', 'topic']);
      assert.notEqual(g.status, 0);
      assert.match(g.stderr, /matched multiple \(2\) remote tracking branches/);
      const before = targetState(ourDir);
      const err = await assertRejectsWith(
        PcheckoutError,
        () => checkout(ourDir, { ref: 'topic', racyWait: false }),
        'ERR_AMBIGUOUS_REF',
      );
      assert.match(err.message, /matched multiple \(2\) remote tracking branches/);
      assert.deepEqual(targetState(ourDir), before);

      for (const dir of [gitDir, ourDir]) git(dir, ['config', 'checkout.defaultRemote', 'other']);
      git(gitDir, ['checkout', '-q', 'topic']);
      const s = await checkout(ourDir, { ref: 'topic', racyWait: false });
      assert.deepEqual(s.newBranch, { name: 'topic', upstream: 'other/topic' });
      assertSameCheckout(ourDir, gitDir, 'checkout topic with checkout.defaultRemote');
      assert.equal(gitDirFile(ourDir, 'config'), gitDirFile(gitDir, 'config'));
    });

    test('checkout.guess=false: no guess, the name is unknown', async () => {
      const { gitDir, ourDir } = clonedTwins(upstream, 'noguess', {
        configure: (dir) => git(dir, ['config', 'checkout.guess', 'false']),
      });
      assert.notEqual(gitTry(gitDir, ['checkout', 'topic']).status, 0);
      await assertRejectsWith(
        PcheckoutError,
        () => checkout(ourDir, { ref: 'topic', racyWait: false }),
        'ERR_BAD_REF',
      );
    });
  });

  test('a branch checked out in another worktree is refused, as git refuses it', async () => {
    const base = upstream.copy('wt');
    const linked = tmpPath('wt-linked');
    git(base.dir, ['worktree', 'add', '-q', linked, 'topic']);
    const g = gitTry(base.dir, ['checkout', 'topic']);
    assert.notEqual(g.status, 0);
    const before = targetState(base.dir);
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(base.dir, { ref: 'topic', racyWait: false }),
      'ERR_BRANCH_CHECKED_OUT',
    );
    assert.equal(`fatal: ${err.message}\n`, g.stderr);
    assert.deepEqual(targetState(base.dir), before);
    // From the linked worktree, the main worktree's branch; -f does not override it either.
    const g2 = gitTry(linked, ['checkout', '-f', 'main']);
    const err2 = await assertRejectsWith(
      PcheckoutError,
      () => checkout(linked, { ref: 'main', force: true, racyWait: false }),
      'ERR_BRANCH_CHECKED_OUT',
    );
    assert.equal(`fatal: ${err2.message}\n`, g2.stderr);
    // Detaching at the same commit is fine.
    await checkout(linked, { ref: 'main~0', racyWait: false });
    assert.equal(gitOut(linked, 'rev-parse', 'HEAD'), gitOut(base.dir, 'rev-parse', 'main'));
  });

  test("a tree is refused as git refuses it; resolveRevision's allowTree accepts it", async () => {
    const { gitDir, ourDir } = twins(upstream.dir, 'tree');
    const before = targetState(ourDir);
    for (const rev of ['main^{tree}', 'vtree']) {
      const g = gitTry(gitDir, ['checkout', rev]);
      assert.notEqual(g.status, 0);
      assert.match(g.stderr, /Cannot switch branch to a non-commit/);
      const err = await assertRejectsWith(
        PcheckoutError,
        () => checkout(ourDir, { ref: rev, racyWait: false }),
        'ERR_BAD_REF',
      );
      assert.ok(err.message.startsWith(`Cannot switch branch to a non-commit '${rev}'`));
      assert.deepEqual(targetState(ourDir), before);
    }
    const repo = openRepo(ourDir);
    const odb = new (loadAddon().Odb)(repo.objectDirs, 1 << 20);
    try {
      const tree = gitOut(ourDir, 'rev-parse', 'main^{tree}');
      for (const rev of ['main^{tree}', 'vtree', tree]) {
        const r = resolveRevision(new Refs(repo), odb, rev, { allowTree: true });
        assert.equal(r.commit, null);
        assert.equal(r.tree, tree);
      }
    } finally {
      odb.close();
    }
  });

  describe('command line', () => {
    test('-C stacks; one argument: a directory is the repository, else a revision', () => {
      const { ourDir } = twins(upstream.dir, 'cli');
      const parent = path.dirname(ourDir);
      const name = path.basename(ourDir);
      let r = runCli(['-q', '-C', parent, '-C', name, 'topic']);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(gitOut(ourDir, 'symbolic-ref', 'HEAD'), 'refs/heads/topic');
      r = runCli(['-q', '-'], { cwd: ourDir });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(gitOut(ourDir, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
      // A directory named like a branch: the directory wins (HEAD checked out again there)…
      fs.mkdirSync(path.join(ourDir, 'topic'));
      fs.writeFileSync(path.join(ourDir, 'topic', 'x'), '');
      r = runCli(['-q', 'topic'], { cwd: ourDir });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(gitOut(ourDir, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
      // …and naming the repository too makes it the revision; a trailing -- changes nothing.
      r = runCli(['-q', '.', 'topic', '--'], { cwd: ourDir });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(gitOut(ourDir, 'symbolic-ref', 'HEAD'), 'refs/heads/topic');
      assert.equal(gitOut(ourDir, 'status', '--porcelain'), '?? topic/');
    });

    test('-- <paths>: pathspecs as git takes them, from the top only for now', () => {
      const { gitDir, ourDir } = twins(upstream.dir, 'cli-paths');
      git(gitDir, ['checkout', '-q', 'topic', '--', 'topic.txt']);
      let r = runCli(['-q', 'topic', '--', 'topic.txt'], { cwd: ourDir });
      assert.equal(r.status, 0, r.stderr);
      const seen = (dir) => ({ ...observe(dir), headLog: null }); // HEAD does not move
      assert.deepEqual(seen(ourDir), seen(gitDir), 'checkout topic -- topic.txt');
      assert.equal(observe(ourDir).status, 'A  topic.txt\n');
      const before = targetState(ourDir);
      r = runCli(['-q', 'topic', '--', 'b.txt'], { cwd: path.join(ourDir, 'dir') });
      assert.equal(r.status, 128, r.stderr);
      assert.match(r.stderr, /^pcheckout: ERR_UNSUPPORTED: pathspecs from a subdirectory/);
      assert.deepEqual(targetState(ourDir), before);
    });

    test('--help documents -C, the single-argument rule and --', () => {
      const r = runCli(['--help']);
      for (const word of ['-C <path>', 'a directory wins', 'after -- are pathspecs']) {
        assert.ok(r.stdout.includes(word), `--help lacks '${word}'`);
      }
    });
  });

  test('GIT_DIR and GIT_WORK_TREE, as git reads them', () => {
    const base = tmpPath('envrepo');
    git(ROOT, ['clone', '-q', '--no-checkout', '--bare', upstream.dir, `${base}.git`]);
    git(`${base}.git`, ['config', 'core.bare', 'false']);
    const pair = twins(`${base}.git`, 'env');
    // GIT_DIR + GIT_WORK_TREE from an unrelated directory.
    const elsewhere = tmpDir('env-cwd');
    const wtGit = tmpDir('env-wt-git');
    const wtOurs = tmpDir('env-wt-ours');
    const env = (gitDirPath, wt) => ({ GIT_DIR: gitDirPath, GIT_WORK_TREE: wt });
    git(elsewhere, ['checkout', '-q', 'topic'], { env: env(pair.gitDir, wtGit) });
    let r = runCliEnv(['-q', 'topic'], { cwd: elsewhere, env: env(pair.ourDir, wtOurs) });
    assert.equal(r.status, 0, r.stderr);
    const snapshot = (dir) => fs.readdirSync(dir, { recursive: true }).sort();
    assert.deepEqual(snapshot(wtOurs), snapshot(wtGit));
    assert.equal(
      fs.readFileSync(path.join(pair.ourDir, 'HEAD'), 'utf8'),
      fs.readFileSync(path.join(pair.gitDir, 'HEAD'), 'utf8'),
    );
    const lsFiles = (gd, wt) => git(wt, ['ls-files', '-s'], { env: env(gd, wt) });
    assert.equal(lsFiles(pair.ourDir, wtOurs), lsFiles(pair.gitDir, wtGit));
    assert.equal(git(wtOurs, ['status', '--porcelain'], { env: env(pair.ourDir, wtOurs) }), '');
    // GIT_DIR alone: the current directory is the top of the worktree (a relative GIT_DIR too).
    const pair2 = twins(`${base}.git`, 'env2');
    const wt2Git = tmpDir('env-wt2-git');
    const wt2Ours = tmpDir('env-wt2-ours');
    git(wt2Git, ['checkout', '-q', 'main'], { env: { GIT_DIR: pair2.gitDir } });
    const rel = path.relative(wt2Ours, pair2.ourDir);
    r = runCliEnv(['-q', 'main'], { cwd: wt2Ours, env: { GIT_DIR: rel } });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(snapshot(wt2Ours), snapshot(wt2Git));
    assert.deepEqual(snapshot(wt2Ours), ['a.txt', 'dir', 'dir/b.txt', 'run.sh']);
  });

  test('core.sharedRepository: modes of the index, HEAD, refs and reflogs as git sets them', async () => {
    for (const shared of ['group', 'all', '0640', 'umask']) {
      const { gitDir, ourDir } = clonedTwins(upstream, `shared-${shared}`, {
        configure: (dir) => git(dir, ['config', 'core.sharedRepository', shared]),
      });
      git(gitDir, ['checkout', '-q', 'topic']);
      await checkout(ourDir, { ref: 'topic', racyWait: false });
      git(gitDir, ['checkout', '-q', 'main']);
      await checkout(ourDir, { ref: 'main', racyWait: false });
      const modes = (dir) =>
        Object.fromEntries(
          ['index', 'HEAD', 'config', 'refs/heads/topic', 'logs/HEAD', 'logs/refs/heads/topic'].map(
            (f) => [f, (fs.statSync(path.join(dir, '.git', f)).mode & 0o7777).toString(8)],
          ),
        );
      assert.deepEqual(modes(ourDir), modes(gitDir), `core.sharedRepository=${shared}`);
    }
  });

  test('the index version git writes: index.version, feature.manyFiles, an existing index', async () => {
    const version = (dir) => fs.readFileSync(path.join(dir, '.git', 'index')).readUInt32BE(4);
    const cases = [
      [[], 2],
      [['index.version', '4'], 4],
      [['index.version', '3'], 2],
      [['feature.manyFiles', 'true'], 4],
    ];
    for (const [config, expected] of cases) {
      const { gitDir, ourDir } = clonedTwins(upstream, 'indexv', {
        configure: (dir) => config.length && git(dir, ['config', ...config]),
      });
      git(gitDir, ['checkout', '-q', 'main']);
      await checkout(ourDir, { ref: 'main', racyWait: false });
      assert.equal(version(gitDir), expected, `git with ${config.join('=')}`);
      assert.equal(version(ourDir), version(gitDir), `with ${config.join('=')}`);
      assert.equal(gitOut(ourDir, 'status', '--porcelain'), '');
    }
    // An existing version-4 index keeps its version across a switch, with no config.
    const { gitDir, ourDir } = twins(upstream.dir, 'indexv-keep');
    for (const dir of [gitDir, ourDir]) git(dir, ['update-index', '--index-version', '4']);
    git(gitDir, ['checkout', '-q', 'topic']);
    await checkout(ourDir, { ref: 'topic', racyWait: false });
    assert.equal(version(gitDir), 4);
    assert.equal(version(ourDir), 4);
    assertSameCheckout(ourDir, gitDir, 'switch with a v4 index');
  });

  describe('post-checkout hook', () => {
    const HOOK =
      '#!/bin/sh\necho "$@" "[$(pwd)]" "[${GIT_DIR-unset}]" "[${GIT_PREFIX-unset}]" "[${GIT_EXEC_PATH:+exec path set}]" >> "$0.log"\nexit ${HOOK_EXIT:-0}\n';
    function installHook(dir, rel = '.git/hooks') {
      fs.mkdirSync(path.join(dir, rel), { recursive: true });
      fs.writeFileSync(path.join(dir, rel, 'post-checkout'), HOOK, { mode: 0o755 });
    }
    const hookLog = (dir, rel = '.git/hooks') =>
      fs.readFileSync(path.join(dir, rel, 'post-checkout.log'), 'utf8').replaceAll(dir, '<top>');

    test("git's arguments (old and new HEAD, 1; HEAD, HEAD, 0 for paths), from the top; not for a restore", async () => {
      const { gitDir, ourDir } = clonedTwins(upstream, 'hook');
      for (const dir of [gitDir, ourDir]) installHook(dir);
      const sub = path.join(ourDir, 'dir');
      git(gitDir, ['checkout', '-q', 'main']);
      await checkout(ourDir, { ref: 'main', racyWait: false });
      git(path.join(gitDir, 'dir'), ['checkout', '-q', 'topic']);
      const r = runCli(['-q', 'topic'], { cwd: sub });
      assert.equal(r.status, 0, r.stderr);
      git(gitDir, ['checkout', '-q', '-f']);
      await checkout(ourDir, { force: true, racyWait: false });
      git(gitDir, ['checkout-index', '-a', '-f']);
      const s = await checkout(ourDir, { restore: true, racyWait: false });
      assert.equal(s.hook, null);
      // Paths: HEAD twice and 0.
      git(gitDir, ['checkout', '-q', 'main', '--', 'a.txt']);
      await checkout(ourDir, { ref: 'main', paths: ['a.txt'], racyWait: false });
      assert.equal(hookLog(ourDir), hookLog(gitDir));
      assert.equal(hookLog(ourDir).split('\n').length, 5, hookLog(ourDir));
      assert.match(hookLog(ourDir).trimEnd().split('\n')[3], /^([0-9a-f]{40}) \1 0 /);
    });

    test("the hook's environment in a linked worktree and behind a .git file, as git sets it", async () => {
      const { gitDir, ourDir } = clonedTwins(upstream, 'hookenv');
      const linked = (dir) => {
        const lw = path.join(`${dir}-wt`, 'lw');
        git(dir, ['worktree', 'add', '-q', lw, '-b', 'lw', 'main']);
        return lw;
      };
      const [gitLw, ourLw] = [linked(gitDir), linked(ourDir)];
      for (const dir of [gitDir, ourDir]) installHook(dir);
      git(gitLw, ['checkout', '-q', 'topic']);
      await checkout(ourLw, { ref: 'topic', racyWait: false });
      assert.match(hookLog(gitDir), /\[<top>\/\.git\/worktrees\/lw\] \[\] \[exec path set\]/);
      assert.equal(hookLog(ourDir), hookLog(gitDir));
      // A separate git directory: the worktree's .git is a file naming it.
      const separate = (dir) => {
        const top = `${dir}-sep`;
        git(path.dirname(dir), [
          'clone',
          '-q',
          '--no-checkout',
          `--separate-git-dir=${top}.git`,
          upstream.dir,
          top,
        ]);
        installHook(`${top}.git`, 'hooks');
        return top;
      };
      const [gitTop, ourTop] = [separate(gitDir), separate(ourDir)];
      git(gitTop, ['checkout', '-q', 'main']);
      await checkout(ourTop, { ref: 'main', racyWait: false });
      const sepLog = (top) =>
        fs.readFileSync(`${top}.git/hooks/post-checkout.log`, 'utf8').replaceAll(top, '<top>');
      assert.match(sepLog(gitTop), /\[<top>\.git\]/);
      assert.equal(sepLog(ourTop), sepLog(gitTop));
    });

    test('core.hooksPath; a failing hook fails the command after the checkout, as git', () => {
      const { gitDir, ourDir } = clonedTwins(upstream, 'hookfail', {
        configure: (dir) => git(dir, ['config', 'core.hooksPath', 'my-hooks']),
      });
      for (const dir of [gitDir, ourDir]) installHook(dir, 'my-hooks');
      const g = spawnSync('git', ['checkout', '-q', 'main'], {
        cwd: gitDir,
        env: { ...gitEnv, HOOK_EXIT: '3' },
      });
      const r = runCliEnv(['-q', 'main'], { cwd: ourDir, env: { HOOK_EXIT: '3' } });
      assert.equal(r.status, g.status, r.stderr);
      assert.notEqual(r.status, 0);
      assert.equal(hookLog(ourDir, 'my-hooks'), hookLog(gitDir, 'my-hooks'));
      const state = (dir) => {
        const o = observe(dir, { status: false });
        delete o.headLog; // the reflog's time may differ by a second
        return o;
      };
      assert.deepEqual(state(ourDir), state(gitDir), 'the checkout is done all the same');
    });
  });
});
