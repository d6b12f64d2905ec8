// Refusals and failures: each is a PcheckoutError with the right code, and leaves the target as
// it was (no index, no files where the spec says so). Corrupt-object runs happen in a child
// process so a native crash shows up as a failed assertion.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import {
  Repo,
  assertStorage,
  editLines,
  freshClone,
  git,
  gitOut,
  gitTry,
  packContents,
  prng,
  randomBytes,
  textLines,
  tmpDir,
  worktreeEntries,
} from './helpers/git.mjs';
import { assertRejectsWith, checkoutInChild, describeChild, targetState } from './helpers/run.mjs';

function smallRepo() {
  const r = Repo.init('err');
  r.write('a.txt', 'a\n');
  r.write('dir/b.txt', 'b\n');
  r.symlink('link', 'a.txt');
  r.commit('one');
  return r;
}

/** A text file with versions (HEAD's is a delta once packed) and a 2 MB incompressible file. */
function corruptibleRepo() {
  const r = Repo.init('corruptible');
  const rand = prng(3);
  let lines = textLines(rand, 3000);
  r.write('docs/text.txt', lines.join('\n'));
  r.write('big.bin', randomBytes(2 << 20, 5));
  r.write('small.txt', 'small\n');
  r.commit('1');
  for (let i = 2; i <= 4; i++) {
    lines = editLines(lines, rand, { changes: 5, drop: 50 });
    r.write('docs/text.txt', lines.join('\n'));
    r.commit(`${i}`);
  }
  return r;
}

/** [start, end) of object `id` inside `pack` (end: next object or the trailing checksum). */
function entryRange(pack, id) {
  const size = fs.statSync(pack.file).size;
  const offsets = [...pack.objects.values()].map((e) => e.offset).sort((a, b) => a - b);
  const start = pack.objects.get(id).offset;
  const next = offsets.find((o) => o > start) ?? size - 20;
  return [start, next];
}

function flipBytes(file, at, count) {
  fs.chmodSync(file, 0o644);
  const fd = fs.openSync(file, 'r+');
  try {
    const buf = Buffer.alloc(count);
    fs.readSync(fd, buf, 0, count, at);
    for (let i = 0; i < count; i++) buf[i] ^= 0xff;
    fs.writeSync(fd, buf, 0, count, at);
  } finally {
    fs.closeSync(fd);
  }
}

function looseObjectPath(dir, id) {
  return path.join(dir, '.git', 'objects', id.slice(0, 2), id.slice(2));
}

const RUNS = [
  { workers: 1, threshold: 0 },
  { workers: 2, threshold: 0 },
];

/** Run checkout in a child; it must fail with one of `codes`, cleanly, writing no index. */
function assertFailsInChild(dir, opts, codes) {
  const r = checkoutInChild(dir, opts, { timeout: 60_000 });
  assert.equal(r.signal, null, `child crashed: ${describeChild(r)}`);
  assert.ok(r.result, `child died before reporting: ${describeChild(r)}`);
  assert.equal(
    r.result.ok,
    false,
    `checkout succeeded on a broken repository: ${describeChild(r)}`,
  );
  assert.ok(r.result.error.isPcheckoutError, `not a PcheckoutError: ${describeChild(r)}`);
  assert.ok(
    codes.includes(r.result.error.code),
    `expected ${codes.join(' or ')}, got ${r.result.error.code}: ${r.result.error.message}`,
  );
  assert.equal(r.status, 0, `child exited ${r.status}: ${describeChild(r)}`);
  assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')), 'an index was written');
  assert.ok(!fs.existsSync(path.join(dir, '.git', 'index.lock')), 'index.lock left behind');
  return r;
}

describe('preconditions', () => {
  let repo;
  before(() => {
    repo = smallRepo();
  });

  // No index yet but something in the worktree: git's "initial checkout" — untracked files
  // that are not in the way stay, one in the way of a tracked file stops it.
  const strays = [
    ['a file', (dir) => fs.writeFileSync(path.join(dir, 'stray.txt'), 'keep me\n'), 'stray.txt'],
    ['an empty directory', (dir) => fs.mkdirSync(path.join(dir, 'empty-dir')), null],
    ['a symlink', (dir) => fs.symlinkSync('a.txt', path.join(dir, 'stray-link')), 'stray-link'],
  ];
  for (const [label, make, untracked] of strays) {
    test(`no index, ${label} not in the way: checked out around it, as git does`, async () => {
      const dir = freshClone(repo);
      make(dir);
      const s = await checkout(dir, { workers: 2, threshold: 0, racyWait: false });
      assert.equal(s.mode, 'switch');
      const status = gitOut(dir, 'status', '--porcelain');
      assert.equal(status, untracked ? `?? ${untracked}` : '');
    });
  }

  test('no index, an untracked file where a tracked one goes: ERR_WOULD_OVERWRITE, nothing written', async () => {
    const dir = freshClone(repo);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'mine\n');
    const stateBefore = targetState(dir);
    const mtime = fs.lstatSync(path.join(dir, 'a.txt')).mtimeMs;
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, { workers: 2, threshold: 0 }),
      'ERR_WOULD_OVERWRITE',
    );
    assert.deepEqual(err.paths, ['a.txt']);
    assert.match(err.message, /untracked working tree files would be overwritten by checkout/);
    assert.deepEqual(targetState(dir), stateBefore, 'worktree, index or HEAD changed');
    assert.equal(fs.lstatSync(path.join(dir, 'a.txt')).mtimeMs, mtime, 'a.txt was touched');
  });

  test('held .git/index.lock: ERR_INDEX_LOCKED, no files, lock untouched', async () => {
    const dir = freshClone(repo);
    const lock = path.join(dir, '.git', 'index.lock');
    fs.writeFileSync(lock, 'held by another process\n');
    const lockStat = fs.statSync(lock);
    await assertRejectsWith(PcheckoutError, () => checkout(dir), 'ERR_INDEX_LOCKED');
    assert.deepEqual(worktreeEntries(dir), [], 'files were written despite the lock');
    assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')), 'an index was written');
    assert.equal(fs.readFileSync(lock, 'utf8'), 'held by another process\n', 'lock rewritten');
    assert.equal(fs.statSync(lock).ino, lockStat.ino, 'lock replaced');
    assert.equal(readHeadOf(dir), 'ref: refs/heads/main\n');
    // Once released, the same target checks out normally.
    fs.rmSync(lock);
    const summary = await checkout(dir);
    assert.equal(summary.files, 2);
  });

  test('not a repository: ERR_NOT_A_REPOSITORY', async () => {
    const empty = tmpDir('not-a-repo');
    await assertRejectsWith(PcheckoutError, () => checkout(empty), 'ERR_NOT_A_REPOSITORY');
    assert.deepEqual(fs.readdirSync(empty), [], 'wrote into a non-repository');
    const missing = path.join(empty, 'does-not-exist');
    await assertRejectsWith(PcheckoutError, () => checkout(missing), 'ERR_NOT_A_REPOSITORY');
    assert.ok(!fs.existsSync(missing), 'created a directory for a missing repository');
    const file = path.join(empty, 'file');
    fs.writeFileSync(file, 'x');
    await assertRejectsWith(PcheckoutError, () => checkout(file), 'ERR_NOT_A_REPOSITORY');
  });
});

function readHeadOf(dir) {
  return fs.readFileSync(path.join(dir, '.git', 'HEAD'), 'utf8');
}

describe('invalid options: ERR_INVALID_OPTION, nothing written', () => {
  let repo;
  before(() => {
    repo = smallRepo();
  });
  const bad = [
    { workers: -1.5 },
    { workers: 'x' },
    { workers: Number.NaN },
    { workers: 2.5 },
    { threshold: -1 },
    { threshold: 'x' },
    { threshold: 1.5 },
    { ref: 42 },
    { onProgress: 'not a function' },
    { signal: 'not a signal' },
  ];
  for (const opts of bad) {
    const label = Object.entries(opts)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? `'${v}'` : String(v)}`)
      .join(', ');
    test(`{ ${label} }`, async () => {
      const dir = freshClone(repo);
      const stateBefore = targetState(dir);
      const err = await assertRejectsWith(
        PcheckoutError,
        () => checkout(dir, opts),
        'ERR_INVALID_OPTION',
      );
      const key = Object.keys(opts)[0];
      assert.ok(err.message.includes(key), `message should name the option: ${err.message}`);
      assert.deepEqual(targetState(dir), stateBefore);
    });
  }
});

describe('broken object stores: coded error, no index, no crash', () => {
  let loose;
  let packed;
  before(() => {
    loose = corruptibleRepo();
    assertStorage(loose.dir, 'loose');
    packed = loose.copy('corruptible-packed').gc();
    assertStorage(packed.dir, 'ofs');
  });

  for (const opts of RUNS) {
    const mode = `workers ${opts.workers}`;

    test(`bytes flipped in the middle of the .pack (${mode})`, () => {
      const dir = freshClone(packed, { hardlinks: false });
      const [pack] = packContents(dir);
      const size = fs.statSync(pack.file).size;
      const mid = Math.floor(size / 2);
      const bigId = gitOut(dir, 'rev-parse', 'HEAD:big.bin');
      const [start, end] = entryRange(pack, bigId);
      assert.ok(start < mid - 16 && mid + 16 < end, 'the middle of the pack is not in big.bin');
      flipBytes(pack.file, mid, 16);
      assert.notEqual(gitTry(dir, ['cat-file', 'blob', bigId]).status, 0, 'git sees no damage');
      assertFailsInChild(dir, opts, ['ERR_CORRUPT_PACK', 'ERR_CORRUPT_OBJECT']);
    });

    test(`a corrupt delta needed by HEAD (${mode})`, () => {
      const dir = freshClone(packed, { hardlinks: false });
      const [pack] = packContents(dir);
      const id = gitOut(dir, 'rev-parse', 'HEAD:docs/text.txt');
      assert.equal(pack.objects.get(id).type, 6, 'HEAD:docs/text.txt is not an OFS delta');
      const [start, end] = entryRange(pack, id);
      assert.ok(end - start > 12, 'delta entry too small to damage');
      flipBytes(pack.file, Math.floor((start + end) / 2), 4);
      assert.notEqual(gitTry(dir, ['cat-file', 'blob', id]).status, 0, 'git sees no damage');
      assertFailsInChild(dir, opts, ['ERR_CORRUPT_PACK', 'ERR_CORRUPT_OBJECT']);
    });

    test(`a truncated .pack (${mode})`, () => {
      const dir = freshClone(packed, { hardlinks: false });
      const [pack] = packContents(dir);
      fs.chmodSync(pack.file, 0o644);
      fs.truncateSync(pack.file, Math.floor(fs.statSync(pack.file).size * 0.6));
      assertFailsInChild(dir, opts, ['ERR_CORRUPT_PACK', 'ERR_CORRUPT_OBJECT']);
    });

    test(`a loose object that is not zlib data (${mode})`, () => {
      const dir = freshClone(loose, { hardlinks: false });
      const file = looseObjectPath(dir, gitOut(dir, 'rev-parse', 'HEAD:small.txt'));
      fs.rmSync(file);
      fs.writeFileSync(file, randomBytes(64, 99));
      assertFailsInChild(dir, opts, ['ERR_CORRUPT_OBJECT']);
    });

    test(`a loose object whose header lies about its size (${mode})`, () => {
      const dir = freshClone(loose, { hardlinks: false });
      const file = looseObjectPath(dir, gitOut(dir, 'rev-parse', 'HEAD:small.txt'));
      fs.rmSync(file);
      fs.writeFileSync(file, zlib.deflateSync(Buffer.from('blob 999\0small\n')));
      assertFailsInChild(dir, opts, ['ERR_CORRUPT_OBJECT']);
    });

    test(`a missing blob (${mode})`, () => {
      const dir = freshClone(loose, { hardlinks: false });
      fs.rmSync(looseObjectPath(dir, gitOut(dir, 'rev-parse', 'HEAD:small.txt')));
      assertFailsInChild(dir, opts, ['ERR_MISSING_OBJECT']);
    });
  }

  test('a missing tree', () => {
    const dir = freshClone(loose, { hardlinks: false });
    fs.rmSync(looseObjectPath(dir, gitOut(dir, 'rev-parse', 'HEAD:docs')));
    assertFailsInChild(dir, {}, ['ERR_MISSING_OBJECT']);
    assert.deepEqual(worktreeEntries(dir), [], 'files written before the tree was complete');
  });
});
