// Crash safety, proved by killing: a checkout SIGKILLed at every kill point it passes (its locks
// taken, each phase, each chunk of files — other workers mid-write —, between the index and
// HEAD; see src/kill-point.ts), then the stale locks removed (git leaves them too) and
// `pcheckout --force` run again, ends with exactly git's worktree and index every time. After
// each kill the index is whole (git reads it) and git accepts the repository as it is: the index
// goes first, so a kill before HEAD moves leaves staged changes, not damage.
// Slow (two checkouts and a comparison per kill point): run by `npm run test:slow`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { assertMatchesGit, gitOracle } from '../helpers/compare.mjs';
import { Repo, freshClone, git, gitEnv, gitOut, gitTry, tmpPath } from '../helpers/git.mjs';
import { CLI } from '../helpers/run.mjs';

const MIN_POINTS = 20;

function cli(args, env = {}) {
  const r = spawnSync(process.execPath, [CLI, '--racy-wait=never', ...args], {
    env: { ...gitEnv, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return r;
}

/** Every lock file under a git directory (index.lock, HEAD.lock, refs/heads/x.lock, config.lock). */
function locks(gitDir) {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && e.name !== 'objects') walk(p);
      else if (e.name.endsWith('.lock')) found.push(p);
    }
  };
  walk(gitDir);
  return found;
}

function buildRepo() {
  const src = Repo.init('kill-loop');
  for (let i = 0; i < 600; i++) {
    src.write(`d${i % 12}/s${i % 60}/f${i}.txt`, `file ${i}\n${'x'.repeat(i % 700)}\n`, {
      exec: i % 97 === 0,
    });
  }
  src.write('turns-into-dir', 'a file on main\n');
  src.write('dir-becomes-file/inner.txt', 'inside\n');
  src.symlink('link', 'd0/s0/f0.txt');
  src.commit('main');
  git(src.dir, ['checkout', '-q', '-b', 'other']);
  for (let i = 0; i < 600; i += 3) src.write(`d${i % 12}/s${i % 60}/f${i}.txt`, `other ${i}\n`);
  for (let i = 1; i < 600; i += 12) src.rm(`d${i % 12}/s${i % 60}/f${i}.txt`);
  for (let i = 0; i < 80; i++) src.write(`new/n${i % 10}/g${i}.txt`, `new ${i}\n`);
  src.rm('turns-into-dir').write('turns-into-dir/now.txt', 'a directory on other\n');
  src.rm('dir-becomes-file').write('dir-becomes-file', 'a file on other\n');
  src.rm('link').symlink('link', 'new/n0/g0.txt');
  src.commit('other');
  git(src.dir, ['checkout', '-q', 'main']);
  return src;
}

describe('killed at every point, then re-run with --force', () => {
  let src;
  before(() => {
    src = buildRepo();
  });

  const scenarios = [
    {
      name: 'a fresh checkout',
      prepare: (dir) => dir,
      args: [],
      ref: undefined,
    },
    {
      name: 'a switch to another branch',
      prepare: (dir) => {
        git(dir, ['checkout', '-q', 'main']);
        return dir;
      },
      args: ['other'],
      ref: 'other',
    },
  ];

  for (const s of scenarios) {
    test(`${s.name}: the target worktree and index every time`, () => {
      const template = s.prepare(freshClone(src, { prefix: 'kill-template' }));
      const oracle = gitOracle(src, { ref: s.ref });
      const headBefore = gitOut(template, 'rev-parse', 'HEAD');
      let points = 0;
      let stagedOnly = 0;
      for (let k = 1; ; k++) {
        const dir = tmpPath('killed');
        fs.cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
        // The copies are new inodes with new times: let the index say so, as git status would.
        if (fs.existsSync(path.join(dir, '.git', 'index')))
          git(dir, ['update-index', '-q', '--refresh']);
        const r = cli(['--workers', '2', '--threshold', '0', dir, ...s.args], {
          PCHECKOUT_TEST_KILL_AT: String(k),
        });
        if (r.signal === null) {
          // Past the last kill point: a plain, complete run.
          assert.equal(r.status, 0, r.stderr);
          assertMatchesGit(dir, src, { ref: s.ref });
          break;
        }
        assert.equal(r.signal, 'SIGKILL', `k=${k}: ${r.stderr}`);
        points++;
        const gitDir = path.join(dir, '.git');
        for (const lock of locks(gitDir)) fs.rmSync(lock);
        // The index is never torn: git reads it (and checks its checksum) or there is none.
        if (fs.existsSync(path.join(gitDir, 'index'))) {
          const ls = gitTry(dir, ['ls-files', '-s', '-z']);
          assert.equal(ls.status, 0, `k=${k}: git cannot read the index: ${ls.stderr}`);
          // The index already holds the target while HEAD has not moved yet: git sees staged
          // changes, a state it accepts.
          const head = gitOut(dir, 'rev-parse', 'HEAD');
          if (ls.stdout === oracle.lsFiles && head === headBefore && head !== oracle.commit) {
            stagedOnly++;
          }
        }
        const status = gitTry(dir, ['status', '--porcelain']);
        assert.equal(status.status, 0, `k=${k}: git status fails: ${status.stderr}`);
        // Recovery.
        const again = cli(['--force', dir, ...s.args]);
        assert.equal(again.status, 0, `k=${k}: the re-run failed: ${again.stderr}`);
        assertMatchesGit(dir, src, { ref: s.ref });
        fs.rmSync(dir, { recursive: true, force: true });
      }
      assert.ok(points >= MIN_POINTS, `only ${points} kill points`);
      if (s.ref !== undefined) assert.ok(stagedOnly >= 1, 'no kill between the index and HEAD');
      process.stderr.write(`# ${s.name}: ${points} kill points, each recovered\n`);
    });
  }
});
