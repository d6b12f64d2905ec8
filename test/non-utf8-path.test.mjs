// A repository whose path is not valid UTF-8: `git -C $'/srv/r\xff'` works there, so pcheckout
// must too (from the CLI, whose argument reaches JavaScript with U+FFFD in it, and from the API
// given the path's bytes). No JavaScript string names such a directory, so each repository is
// prepared at a plain path, renamed to a name with the bytes 0xff 0xfe in it for the call (git's
// side runs there too, through sh), and renamed back to be compared with git.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildRichRepo, freshClone, git, gitEnv, tmpPath } from './helpers/git.mjs';
import { assertMatchesGit, gitOracle, snapshotTree } from './helpers/compare.mjs';
import { CLI } from './helpers/run.mjs';
import { checkout, createEngine, materialize } from '../dist/index.js';

const src = buildRichRepo({ smallFiles: 20, prefix: 'nonutf8' });

/** `dir` moved to a name beside it that is not UTF-8; returns that name's bytes. */
function away(dir) {
  const bytes = Buffer.concat([
    Buffer.from(`${dir}-`),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('x'),
  ]);
  fs.renameSync(dir, bytes);
  return bytes;
}

/** sh with $R set to `bytes` (printf %b of octal escapes: no argument of ours spells them). */
function sh(bytes, script, env = {}) {
  const raw = [...bytes].map((b) => `\\0${b.toString(8).padStart(3, '0')}`).join('');
  const r = spawnSync('sh', ['-c', `R="$(printf '%b' "$RAW")"; ${script}`], {
    env: { ...gitEnv, ...env, RAW: raw, CLI, NODE: process.execPath },
    encoding: 'buffer',
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

/** A post-checkout hook that records what git gives hooks, and where it ran, in .git. */
function recordingHook(dir) {
  const hook = path.join(dir, '.git', 'hooks', 'post-checkout');
  fs.writeFileSync(
    hook,
    '#!/bin/sh\n' +
      'printf "%s|%s|%s|%s\\n" "$0" "${GIT_DIR-unset}" "${GIT_PREFIX-unset}" "$*" > .git/hook-env\n' +
      'pwd -P > .git/hook-cwd\n',
  );
  fs.chmodSync(hook, 0o755);
}

test('the CLI checks out a fresh clone at a path that is not UTF-8, as git does', () => {
  const dir = freshClone(src);
  const bytes = away(dir);
  const r = sh(bytes, '"$NODE" "$CLI" --no-racy-wait "$R"');
  fs.renameSync(bytes, dir);
  assert.equal(r.status, 0, r.stderr);
  assertMatchesGit(dir, src);
});

test('-C <path> -f there: the same worktree and index as git, and the hook sees what git shows it', () => {
  const ours = freshClone(src);
  const theirs = freshClone(src);
  const results = [];
  for (const [dir, cmd] of [
    [theirs, 'git -C "$R" checkout -q -f'],
    [ours, 'cd / && "$NODE" "$CLI" -q --no-racy-wait -C "$R" -f'],
  ]) {
    git(dir, ['checkout', '-q', '-f']);
    recordingHook(dir);
    const tracked = git(dir, ['ls-files', '-z']).split('\0').filter(Boolean);
    const file = tracked.find((p) => fs.lstatSync(path.join(dir, p)).isFile());
    fs.rmSync(path.join(dir, file));
    const bytes = away(dir);
    const r = sh(bytes, cmd);
    const cwd = fs.readFileSync(Buffer.concat([bytes, Buffer.from('/.git/hook-cwd')]));
    fs.renameSync(bytes, dir);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(cwd.equals(Buffer.concat([bytes, Buffer.from('\n')])), `the hook ran in ${cwd}`);
    results.push(fs.readFileSync(path.join(dir, '.git', 'hook-env'), 'utf8'));
    fs.rmSync(path.join(dir, '.git', 'hook-env'));
    fs.rmSync(path.join(dir, '.git', 'hook-cwd'));
  }
  assert.equal(results[1], results[0], "the hook's $0, GIT_DIR, GIT_PREFIX and arguments");
  assertMatchesGit(ours, src);
});

test('the API takes the bytes: checkout, from a directory below the top, an engine, materialize', async () => {
  const dir = freshClone(src);
  let bytes = away(dir);
  const summary = await checkout(bytes, { racyWait: false });
  assert.equal(summary.mode, 'fresh');
  fs.renameSync(bytes, dir);
  assertMatchesGit(dir, src);

  // From a directory below the top (discovery walks up the bytes), restoring what is deleted.
  const sub = fs
    .readdirSync(dir, { withFileTypes: true })
    .find((e) => e.isDirectory() && e.name !== '.git').name;
  const tracked = git(dir, ['ls-files', '-z']).split('\0').filter(Boolean);
  for (const p of tracked.filter((p) => !p.startsWith(`${sub}/`)).slice(0, 3)) {
    fs.rmSync(path.join(dir, p));
  }
  bytes = away(dir);
  await checkout(Buffer.concat([bytes, Buffer.from(`/${sub}`)]), { force: true, racyWait: false });
  // An engine's call, then a no-op.
  const engine = createEngine({ workers: 2 });
  try {
    const again = await engine.checkout(bytes, { force: true, racyWait: false });
    assert.equal(again.mode, 'force');
  } finally {
    await engine.close();
  }
  fs.renameSync(bytes, dir);
  assertMatchesGit(dir, src);

  // The same repository as a materialize source; never into a directory holding it.
  const target = tmpPath('nonutf8-target');
  bytes = away(dir);
  try {
    await materialize(bytes, target, { racyWait: false });
    await assert.rejects(materialize(bytes, path.dirname(dir), { force: true }), (err) => {
      assert.equal(err.code, 'ERR_INVALID_OPTION');
      assert.match(err.message, /contains the repository at .*\uFFFD\uFFFDx/);
      return true;
    });
  } finally {
    fs.renameSync(bytes, dir);
  }
  const oracle = gitOracle(src);
  const written = snapshotTree(target);
  written.delete('.git');
  for (const [p, e] of oracle.snapshot) assert.deepEqual(written.get(p), e, p);
  assert.equal(written.size, oracle.snapshot.size);
});

test('refusals name the directory as its bytes read, never the descriptor it was reached by', async () => {
  const dir = freshClone(src);
  const bytes = away(dir);
  try {
    await assert.rejects(checkout(Buffer.concat([bytes, Buffer.from('-gone')])), (err) => {
      assert.equal(err.code, 'ERR_NOT_A_REPOSITORY');
      assert.match(err.message, /\uFFFD\uFFFDx-gone/);
      return true;
    });
    // git's ownership rule, judged by the directory the bytes name; git's message, decoded.
    const env = { GIT_TEST_ASSUME_DIFFERENT_OWNER: '1' };
    const ours = sh(bytes, '"$NODE" "$CLI" "$R"', env);
    const theirs = sh(bytes, 'git -C "$R" status', env);
    assert.equal(ours.status, 128);
    assert.equal(theirs.status, 128);
    const line = (s) => s.split('\n')[0].replace(/^(fatal|pcheckout: ERR_DUBIOUS_OWNERSHIP): /, '');
    assert.equal(line(ours.stderr), line(theirs.stderr));
    assert.doesNotMatch(ours.stderr, /\/proc\/self\/fd/);
    // A --target that is not UTF-8 is refused as a usage error, before anything is written.
    const usage = sh(bytes, '"$NODE" "$CLI" --target "$R" .');
    assert.equal(usage.status, 129, usage.stderr);
  } finally {
    fs.renameSync(bytes, dir);
  }
});
