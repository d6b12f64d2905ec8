// A partial clone (--filter=blob:none): the blobs a call writes are fetched from the promisor
// remote in ONE `git fetch` before anything is written, as git's checkout does, and only those
// (a cone's, a switch's changed files'). A failed fetch is ERR_FETCH with nothing written; a
// dry run fetches nothing and says how many blobs it would. The `git` pcheckout runs is the one
// on PATH: a shim first in PATH logs every run (and the ids a fetch is given on stdin).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, beforeEach, describe, test } from 'node:test';
import { PcheckoutError, checkout, createEngine, materialize } from '../dist/index.js';
import { Repo, ROOT, git, gitEnv, gitOut, tmpDir, tmpPath } from './helpers/git.mjs';
import { CLI, assertRejectsWith, targetState } from './helpers/run.mjs';
import { assertSameSnapshot, readIndex, worktreeSnapshot } from './helpers/twin.mjs';

const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
const SHIM = tmpDir('git-shim');
const LOG = path.join(SHIM, 'argv.log');
const IDS = path.join(SHIM, 'stdin.log');
fs.writeFileSync(
  path.join(SHIM, 'git'),
  `#!/bin/sh
printf '%s\\n' "$*" >> '${LOG}'
case " $* " in
  *" --stdin "*) tee -a '${IDS}' | '${REAL_GIT}' "$@" ;;
  *) exec '${REAL_GIT}' "$@" ;;
esac
`,
  { mode: 0o755 },
);
// Set before the first call starts the orchestrator threads (they copy this environment).
process.env.PATH = `${SHIM}:${process.env.PATH}`;
const SHIM_ENV = { ...gitEnv, PATH: `${SHIM}:${gitEnv.PATH}` };

const OPTS = { racyWait: false };

function resetLog() {
  fs.writeFileSync(LOG, '');
  fs.writeFileSync(IDS, '');
}

/** The promisor fetches the shim saw, and the ids they were given. */
function fetches() {
  const runs = fs
    .readFileSync(LOG, 'utf8')
    .split('\n')
    .filter((l) => l.includes(' fetch ') && l.includes('--stdin'));
  const ids = fs.readFileSync(IDS, 'utf8').split('\n').filter(Boolean);
  return { runs, ids };
}

function partialClone(src, { sparse = false } = {}) {
  const dir = tmpPath('partial');
  const args = ['clone', '-q', '--no-checkout', '--filter=blob:none'];
  if (sparse) args.push('--sparse');
  git(ROOT, [...args, `file://${src}`, dir]);
  return dir;
}

/** The ids of the objects in the repository (git lists, never fetches, them here). */
function objectIds(dir) {
  const out = git(dir, [
    'cat-file',
    '--batch-all-objects',
    '--batch-check=%(objectname) %(objecttype)',
  ]);
  return new Set(out.split('\n').filter(Boolean));
}

function blobCount(dir) {
  return [...objectIds(dir)].filter((l) => l.endsWith(' blob')).length;
}

function assertLikeTwin(dir, twin) {
  assertSameSnapshot(worktreeSnapshot(dir), worktreeSnapshot(twin), 'worktree vs git');
  assert.equal(readIndex(dir).text, readIndex(twin).text, 'index vs git');
  assert.equal(gitOut(dir, 'status', '--porcelain'), '', 'git status');
}

describe('partial clones', () => {
  let src;
  let first;
  before(() => {
    src = Repo.init('partial-src');
    git(src.dir, ['config', 'uploadpack.allowFilter', 'true']);
    git(src.dir, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
    src.write('.gitattributes', '*.bat eol=crlf\n');
    src.write('run.bat', 'echo one\necho two\n');
    src.write('README', 'top\n');
    src.write('dirA/a.txt', 'a\n');
    src.write('dirA/tool.sh', '#!/bin/sh\necho tool\n', { exec: true });
    src.write('dirA/deep/x.txt', 'x\n');
    src.write('dirB/b.txt', 'b\n');
    src.write('dirB/.gitattributes', '*.txt text eol=crlf\n');
    src.write('dirB/more/y.txt', 'y\n');
    src.symlink('link', 'README');
    src.symlink('dirA/up', '../dirB/b.txt');
    first = src.commit('one');
    src.write('dirA/a.txt', 'a, changed\n');
    src.write('dirB/new.txt', 'new\n');
    src.rm('dirB/more');
    src.symlink('link', 'dirA/a.txt');
    src.commit('two');
    src.write('dirA/deep/x.txt', 'x, again\n');
    src.chmod('dirA/deep/x.txt', true);
    src.commit('three');
  });
  beforeEach(resetLog);

  test('a fresh checkout: one fetch, then what git checks out', async () => {
    const dir = partialClone(src.dir);
    const twin = partialClone(src.dir);
    git(twin, ['checkout', '-q', '-f']);
    const before = blobCount(dir);
    assert.equal(before, 0);
    const phases = [];
    const summary = await checkout(dir, {
      ...OPTS,
      onProgress: (p) => void (phases.at(-1) !== p.phase && phases.push(p.phase)),
    });
    const { runs, ids } = fetches();
    assert.equal(runs.length, 1, `fetches: ${runs.join('\n')}`);
    assert.equal(
      runs[0],
      '-c fetch.negotiationAlgorithm=noop fetch origin --no-tags --no-write-fetch-head --recurse-submodules=no --filter=blob:none --stdin',
    );
    assert.equal(ids.length, new Set(ids).size, 'an id asked twice');
    assert.equal(summary.fetched.blobs, ids.length);
    assert.equal(summary.fetched.remote, 'origin');
    assert.deepEqual(phases, ['open', 'walk', 'plan', 'fetch', 'write', 'index', 'hook']);
    assertLikeTwin(dir, twin);
    assert.equal(blobCount(dir), blobCount(twin));
    // With the blobs there, nothing more is fetched.
    resetLog();
    const again = await checkout(dir, { ...OPTS, force: true });
    assert.equal(again.fetched, null);
    assert.equal(fetches().runs.length, 0);
  });

  test('a cone: only the blobs inside it, as git fetches them', async () => {
    const dir = partialClone(src.dir, { sparse: true });
    const twin = partialClone(src.dir, { sparse: true });
    for (const d of [dir, twin]) git(d, ['sparse-checkout', 'set', '--cone', 'dirA']);
    const before = objectIds(dir);
    git(twin, ['checkout', '-q', '-f']);
    const summary = await checkout(dir, OPTS);
    assert.equal(fetches().runs.length, 1);
    assert.deepEqual(objectIds(dir), objectIds(twin), 'the same objects as git');
    assert.equal(summary.fetched.blobs, objectIds(dir).size - before.size);
    assert.ok(!fs.existsSync(path.join(dir, 'dirB')));
    assertLikeTwin(dir, twin);
  });

  test('a switch fetches only the changed files’ new blobs', async () => {
    const dir = partialClone(src.dir);
    const twin = partialClone(src.dir);
    git(twin, ['checkout', '-q', '-f', first]);
    await checkout(dir, { ...OPTS, ref: first });
    assertLikeTwin(dir, twin);
    const before = objectIds(dir);
    resetLog();
    const summary = await checkout(dir, { ...OPTS, ref: 'main' });
    git(twin, ['checkout', '-q', 'main']);
    const { runs, ids } = fetches();
    assert.equal(runs.length, 1);
    const changed = gitOut(dir, 'diff-tree', '-r', '--no-renames', first, 'main')
      .split('\n')
      .map((l) => l.split(/\s+/))
      .filter((f) => f[4] !== 'D' && f[1] !== '160000')
      .map((f) => f[3])
      .filter((oid) => !before.has(`${oid} blob`));
    assert.deepEqual([...ids].sort(), [...new Set(changed)].sort());
    assert.equal(summary.fetched.blobs, ids.length);
    assertLikeTwin(dir, twin);
    assert.deepEqual(objectIds(dir), objectIds(twin));
  });

  test('a restore fetches only the restored paths', async () => {
    const dir = partialClone(src.dir);
    await checkout(dir, OPTS);
    // The index says dirA/a.txt is another blob, one the clone never had.
    const old = gitOut(src.dir, 'rev-parse', `${first}:dirA/a.txt`);
    git(dir, ['update-index', '--cacheinfo', `100644,${old},dirA/a.txt`]);
    resetLog();
    const summary = await checkout(dir, { ...OPTS, restore: true, paths: ['dirA/a.txt'] });
    assert.deepEqual(fetches().ids, [old]);
    assert.equal(summary.fetched.blobs, 1);
    assert.equal(fs.readFileSync(path.join(dir, 'dirA/a.txt'), 'utf8'), 'a\n');
  });

  test('a dry run fetches nothing and says how many blobs it would', async () => {
    const dir = partialClone(src.dir);
    const before = objectIds(dir);
    const summary = await checkout(dir, { ...OPTS, dryRun: true });
    assert.equal(fetches().runs.length, 0);
    assert.deepEqual(objectIds(dir), before);
    assert.ok(summary.fetched.blobs > 0);
    assert.equal(summary.fetched.ms, 0);
    const state = targetState(dir);
    assert.deepEqual(state.worktree, []);
    assert.equal(state.index, null);
    // The real call fetches that many.
    const real = await checkout(dir, OPTS);
    assert.equal(real.fetched.blobs, summary.fetched.blobs);
  });

  test('a failed fetch: ERR_FETCH with git’s message, nothing written, no lock', async () => {
    const own = Repo.init('partial-gone');
    git(own.dir, ['config', 'uploadpack.allowFilter', 'true']);
    own.write('a.txt', 'a\n').write('d/b.txt', 'b\n');
    own.commit('one');
    const dir = partialClone(own.dir);
    fs.renameSync(own.dir, `${own.dir}-moved`);
    try {
      const err = await assertRejectsWith(PcheckoutError, () => checkout(dir, OPTS), 'ERR_FETCH');
      assert.match(err.message, /promisor remote 'origin'/);
      assert.match(err.message, /does not appear to be a git repository|fatal/i, err.message);
      assert.equal(fetches().runs.length, 1);
      const state = targetState(dir);
      assert.deepEqual(state.worktree, []);
      assert.equal(state.index, null);
      assert.equal(state.indexLock, null);
      // A switch that fails to fetch leaves index and worktree as they were.
    } finally {
      fs.renameSync(`${own.dir}-moved`, own.dir);
    }
    await checkout(dir, OPTS);
    own.write('a.txt', 'a2\n');
    own.commit('two');
    git(dir, ['fetch', '-q', 'origin']);
    const before = targetState(dir);
    fs.renameSync(own.dir, `${own.dir}-moved`);
    try {
      await assertRejectsWith(
        PcheckoutError,
        () => checkout(dir, { ...OPTS, ref: 'origin/main' }),
        'ERR_FETCH',
      );
      assert.deepEqual(targetState(dir), before);
      assert.equal(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'a\n');
    } finally {
      fs.renameSync(`${own.dir}-moved`, own.dir);
    }
  });

  test('a warm engine: the pool’s readers find the fetched pack, call after call', async () => {
    const engine = createEngine({ workers: 2 });
    try {
      const dir = partialClone(src.dir);
      const twin = partialClone(src.dir);
      // Readers opened before any fetch, kept by the engine.
      await engine.checkout(dir, { ...OPTS, ref: first, threshold: 0 });
      git(twin, ['checkout', '-q', '-f', first]);
      assertLikeTwin(dir, twin);
      resetLog();
      const summary = await engine.checkout(dir, { ...OPTS, ref: 'main', threshold: 0 });
      git(twin, ['checkout', '-q', 'main']);
      assert.equal(fetches().runs.length, 1);
      assert.ok(summary.fetched.blobs > 0);
      assert.equal(summary.pool.used, true, 'the writes went to the pool');
      assertLikeTwin(dir, twin);
    } finally {
      await engine.close();
    }
  });

  test('materialize from a partial clone fetches too', async () => {
    const dir = partialClone(src.dir);
    const target = tmpPath('partial-target');
    const summary = await materialize(dir, target, { ...OPTS, ref: 'main' });
    assert.equal(fetches().runs.length, 1);
    assert.ok(summary.fetched.blobs > 0);
    const twin = partialClone(src.dir);
    git(twin, ['checkout', '-q', '-f']);
    const snap = worktreeSnapshot(target);
    for (const k of [...snap.keys()]) if (k.startsWith('.pcheckout')) snap.delete(k);
    assertSameSnapshot(snap, worktreeSnapshot(twin), 'materialized vs git');
  });

  test('the CLI: one fetch; GIT_NO_LAZY_FETCH keeps the missing-object error', () => {
    const dir = partialClone(src.dir);
    const off = spawnSync(process.execPath, [CLI, '-C', dir], {
      env: { ...SHIM_ENV, GIT_NO_LAZY_FETCH: '1' },
      encoding: 'utf8',
    });
    assert.notEqual(off.status, 0);
    assert.match(off.stderr, /ERR_MISSING_OBJECT/);
    assert.match(off.stderr, /GIT_NO_LAZY_FETCH/);
    assert.equal(fetches().runs.length, 0);
    const dry = spawnSync(process.execPath, [CLI, '-C', dir, '--dry-run'], {
      env: SHIM_ENV,
      encoding: 'utf8',
    });
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stderr, /would fetch \d+ missing blobs from promisor remote 'origin'/);
    assert.equal(fetches().runs.length, 0);
    const r = spawnSync(process.execPath, [CLI, '-C', dir], { env: SHIM_ENV, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /fetched \d+ missing blobs from promisor remote 'origin'/);
    assert.equal(fetches().runs.length, 1);
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });
});
