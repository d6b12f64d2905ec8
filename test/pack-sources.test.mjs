// Where objects come from, read as git reads them: a version 1 pack index (git index-pack
// --index-version=1 still writes one), and an object damaged in one pack but intact in
// another (git falls back to the good copy; so must we, with either pack seen first).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import {
  Repo,
  freshClone,
  git,
  gitOut,
  gitTry,
  packContents,
  randomBytes,
} from './helpers/git.mjs';

function packDir(dir) {
  return path.join(dir, '.git', 'objects', 'pack');
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

describe('pack index version 1', () => {
  let src;
  before(() => {
    src = Repo.init('idx-v1');
    for (let i = 0; i < 40; i++) src.write(`d${i % 4}/f${i}.txt`, `file ${i}\n`.repeat(i + 1));
    src.symlink('link', 'd0/f0.txt');
    src.commit('one');
    src.write('d0/f0.txt', 'changed\n');
    src.commit('two');
    src.gc();
  });

  test('a repository whose only pack has a v1 .idx checks out as with git', async () => {
    const dir = freshClone(src, { hardlinks: false });
    const [pack] = packContents(dir);
    const idx = `${pack.file.slice(0, -'.pack'.length)}.idx`;
    fs.rmSync(idx, { force: true });
    git(dir, ['index-pack', '--index-version=1', '-o', idx, pack.file]);
    const head = fs.readFileSync(idx).subarray(0, 4);
    assert.notDeepEqual([...head], [0xff, 0x74, 0x4f, 0x63], 'git wrote a version 2 index');
    assert.equal(gitTry(dir, ['fsck', '--no-progress']).status, 0, 'git does not read it');
    const summary = await checkout(dir, { workers: 2, threshold: 0, racyWait: false });
    assert.equal(summary.files, 40);
    assertMatchesGit(dir, src);
    // Abbreviated ids are looked up in it too.
    const parent = gitOut(dir, 'rev-parse', 'HEAD~1');
    const again = await checkout(dir, { ref: parent.slice(0, 8), racyWait: false });
    assert.equal(again.commit, parent);
  });
});

describe('an object damaged in one pack, intact in another', () => {
  let src;
  let blob;
  before(() => {
    src = Repo.init('two-copies');
    src.write('big.bin', randomBytes(200_000, 11));
    for (let i = 0; i < 30; i++) src.write(`small/${i}.txt`, `small ${i}\n`);
    src.commit('one');
    src.gc();
    blob = src.rev('HEAD:big.bin');
    // A second pack holding one more copy of big.bin (not a delta: it is alone there).
    git(src.dir, ['pack-objects', '-q', path.join(packDir(src.dir), 'pack')], {
      input: `${blob}\n`,
    });
    assert.equal(packContents(src.dir).length, 2);
  });

  // Either pack may be the one read first (newest first, then the last one that answered):
  // damage each in turn, so one of the runs reads the bad copy before the good one.
  for (const damaged of [0, 1]) {
    for (const workers of [1, 2]) {
      test(`damaged in pack ${damaged + 1} of 2 (workers ${workers}): the good copy is used`, async () => {
        const dir = freshClone(src, { hardlinks: false });
        const packs = packContents(dir);
        assert.equal(packs.length, 2);
        const bad = packs[damaged];
        const entry = bad.objects.get(blob);
        assert.equal(entry.type, 3, 'big.bin is not stored whole');
        flipBytes(bad.file, entry.offset + 2000, 16);
        const out = gitTry(dir, ['cat-file', 'blob', blob], { encoding: 'buffer' });
        assert.equal(out.status, 0, 'git could not read big.bin either');
        const summary = await checkout(dir, { workers, threshold: 0, racyWait: false });
        assert.equal(summary.files, 31);
        assertMatchesGit(dir, src);
      });
    }
  }
});
