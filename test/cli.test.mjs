// The `pcheckout` command line: --json, --quiet, --help, --version, positional repo and ref,
// exit codes and one-line coded errors.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { assertMatchesGit, assertPoolRule, assertSummary } from './helpers/compare.mjs';
import { buildFlatRepo, freshClone, gitOut, tmpDir } from './helpers/git.mjs';
import { CLI, PROJECT, runCli, targetState } from './helpers/run.mjs';

const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT, 'package.json'), 'utf8'));

/** One line `pcheckout: CODE: message`; with `listing`, indented lines (a list of paths) may follow. */
function assertCodedFailure(r, code, { listing = false } = {}) {
  assert.notEqual(r.status, 0, `exit status 0 on failure; stdout: ${r.stdout}`);
  assert.equal(r.signal, null, `killed by ${r.signal}; stderr: ${r.stderr}`);
  const [first, ...rest] = r.stderr.trimEnd().split('\n');
  if (listing)
    for (const line of rest) assert.match(line, /^ {2}/, `unindented line in:\n${r.stderr}`);
  else assert.equal(rest.length, 0, `stderr must be one line, got:\n${r.stderr}`);
  assert.match(first, /^pcheckout: /);
  assert.match(first, code instanceof RegExp ? code : new RegExp(`\\b${code}\\b`));
}

describe('cli', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(30, { prefix: 'cli' });
    repo.write('run.sh', '#!/bin/sh\n', { exec: true });
    repo.symlink('link', 'run.sh');
    repo.commit('more');
    repo.branch('feature');
  });

  test('dist/cli.cjs exists and starts with a node shebang', () => {
    assert.match(fs.readFileSync(CLI, 'utf8').split('\n')[0], /^#!.*node/);
  });

  test('dist/cli.cjs is executable, so the npm bin (npx pcheckout) can run it', () => {
    assert.notEqual(fs.statSync(CLI).mode & 0o111, 0, `${CLI} has no execute bit`);
  });

  test('--help: usage on stdout, exit 0', () => {
    const r = runCli(['--help']);
    assert.equal(r.status, 0, r.stderr);
    for (const word of ['pcheckout', '--workers', '--threshold', '--json', '--quiet']) {
      assert.ok(r.stdout.includes(word), `--help does not mention ${word}:\n${r.stdout}`);
    }
  });

  test('--version: the package version, exit 0', () => {
    const r = runCli(['--version']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout.trim(),
      new RegExp(`^(pcheckout )?v?${pkg.version.replace(/\./g, '\\.')}$`),
    );
  });

  test('--json <repo>: one JSON summary on stdout, checkout equals git', () => {
    const dir = freshClone(repo);
    const r = runCli(['--json', dir]);
    assert.equal(r.status, 0, r.stderr);
    let summary;
    assert.doesNotThrow(() => (summary = JSON.parse(r.stdout)), `stdout is not JSON: ${r.stdout}`);
    const oracle = assertMatchesGit(dir, repo);
    assertSummary(summary, oracle);
    assert.equal(summary.ref, 'refs/heads/main');
    // Start-up, phase by phase: Node's bootstrap, our modules, the addon (loaded by then).
    const { nodeMs, modulesMs, addonMs } = summary.startup;
    for (const ms of [nodeMs, modulesMs, addonMs]) assert.ok(ms > 0 && ms < 10_000, `${ms} ms`);
  });

  test('--workers 2 --threshold 0 --json <repo> <branch>', () => {
    const dir = freshClone(repo, { method: 'copy' });
    const r = runCli(['--workers', '2', '--threshold', '0', '--json', dir, 'feature']);
    assert.equal(r.status, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    const oracle = assertMatchesGit(dir, repo, { ref: 'feature', method: 'copy' });
    assertSummary(summary, oracle, { workers: 2, threshold: 0 });
    assertPoolRule(summary, 2, 0);
    assert.equal(summary.pool.used, true);
    assert.equal(summary.ref, 'refs/heads/feature');
  });

  test('--workers=1 --threshold=5 (= form) with --json', () => {
    const dir = freshClone(repo);
    const r = runCli(['--workers=1', '--threshold=5', '--json', dir]);
    assert.equal(r.status, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.threshold, 5);
    assert.equal(summary.pool.used, false);
    assertMatchesGit(dir, repo);
  });

  test('no repo argument: the current directory; --quiet prints nothing', () => {
    const dir = freshClone(repo);
    const r = runCli(['--quiet'], { cwd: dir });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '', '--quiet must print nothing on stdout');
    assert.equal(r.stderr, '', '--quiet must print nothing on stderr');
    assertMatchesGit(dir, repo);
  });

  test('the line on stderr names the branch, the detached commit, or the restore', () => {
    const dir = freshClone(repo);
    let r = runCli([dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^On branch main: \d+ files, /);
    r = runCli([dir, 'HEAD~1']);
    assert.match(
      r.stderr,
      new RegExp(`^HEAD is now at ${gitOut(dir, 'rev-parse', 'HEAD').slice(0, 12)}: `),
    );
    fs.rmSync(path.join(dir, 'run.sh'), { force: true });
    fs.rmSync(path.join(dir, 'f/0/file-1.txt'));
    r = runCli(['--restore', dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /^Restored from the index: 1 files, .*\(1 created, 0 updated, 0 removed\)\n$/,
    );
  });

  test('bad ref: non-zero exit, one line with ERR_BAD_REF, nothing written', () => {
    const dir = freshClone(repo);
    const stateBefore = targetState(dir);
    const r = runCli([dir, 'no-such-ref']);
    assertCodedFailure(r, 'ERR_BAD_REF');
    assert.deepEqual(targetState(dir), stateBefore);
  });

  test('bad ref with --json: still a coded one-line error, exit non-zero', () => {
    const dir = freshClone(repo);
    const r = runCli(['--json', dir, 'no-such-ref']);
    assertCodedFailure(r, 'ERR_BAD_REF');
  });

  test('--target <dir>: materialize, then a refresh that writes only the difference', () => {
    const dir = path.join(tmpDir('cli-target'), 'out');
    const state = targetState(repo.dir);
    let r = runCli(['--json', '--no-racy-wait', '--target', dir, repo.dir, 'feature~1']);
    assert.equal(r.status, 0, r.stderr);
    let s = JSON.parse(r.stdout);
    assert.equal(s.mode, 'materialize');
    const listed = gitOut(repo.dir, 'ls-tree', '-r', '--name-only', 'feature~1').split('\n');
    assert.equal(s.entries, listed.length);
    r = runCli(['--json', '--no-racy-wait', '--target', dir, repo.dir, 'feature']);
    assert.equal(r.status, 0, r.stderr);
    s = JSON.parse(r.stdout);
    const changed = gitOut(repo.dir, 'diff', '--name-only', 'feature~1', 'feature').split('\n');
    assert.equal(s.created + s.updated + s.deleted, changed.filter(Boolean).length);
    for (const name of gitOut(repo.dir, 'ls-tree', '-r', '--name-only', 'feature').split('\n')) {
      assert.ok(fs.existsSync(path.join(dir, name)) || fs.lstatSync(path.join(dir, name)), name);
    }
    assert.deepEqual(targetState(repo.dir), state, 'the repository changed');
    assertCodedFailure(runCli(['--target', dir, '--restore', repo.dir]), 'ERR_INVALID_OPTION');
  });

  test('untracked file in the way: ERR_WOULD_OVERWRITE', () => {
    const dir = freshClone(repo);
    const tracked = gitOut(dir, 'ls-tree', '--name-only', 'HEAD').split('\n')[0];
    fs.writeFileSync(path.join(dir, tracked), 'x');
    const r = runCli([dir]);
    assertCodedFailure(r, 'ERR_WOULD_OVERWRITE', { listing: true });
    assert.match(r.stderr, new RegExp(`^\\s+${tracked}$`, 'm'));
  });

  test('not a repository: ERR_NOT_A_REPOSITORY', () => {
    const dir = tmpDir('cli-plain');
    assertCodedFailure(runCli([dir]), 'ERR_NOT_A_REPOSITORY');
  });

  for (const args of [
    ['--workers', 'x'],
    ['--workers', '-1.5'],
    ['--threshold', 'lots'],
  ]) {
    test(`${args.join(' ')}: ERR_INVALID_OPTION`, () => {
      const dir = freshClone(repo);
      const stateBefore = targetState(dir);
      assertCodedFailure(runCli([...args, dir]), 'ERR_INVALID_OPTION');
      assert.deepEqual(targetState(dir), stateBefore);
    });
  }

  test('a negative count (-w -1, --threshold -3): the range message, not "ambiguous"', () => {
    const dir = freshClone(repo);
    for (const [args, name, value] of [
      [['-w', '-1'], 'workers', '-1'],
      [['--workers', '-4'], 'workers', '-4'],
      [['--threshold', '-3'], 'threshold', '-3'],
    ]) {
      const r = runCli([...args, dir]);
      assert.equal(r.status, 129, r.stderr);
      assert.match(r.stderr, new RegExp(`--${name} expects a whole number, got '${value}'`));
      assert.doesNotMatch(r.stderr, /ambiguous/);
    }
  });

  test('unknown option: non-zero exit with a coded one-line error', () => {
    const dir = freshClone(repo);
    const stateBefore = targetState(dir);
    assertCodedFailure(runCli(['--no-such-option', dir]), /\bERR_[A-Z_]+\b/);
    assert.deepEqual(targetState(dir), stateBefore);
  });
});
