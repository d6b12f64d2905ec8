// Tests of the test harness itself (no engine needed): a checkout made by git passes the
// oracle, and every kind of damage the oracle is meant to catch makes it fail. Guards the
// other test files against passing vacuously.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import {
  assertIndexStatMatchesDisk,
  assertMatchesGit,
  assertPoolRule,
  assertSameWorktree,
  assertSummary,
  gitOracle,
  indexListing,
} from './helpers/compare.mjs';
import {
  assertStorage,
  describeStorage,
  freshClone,
  git,
  richStorageVariants,
  storageFiles,
  worktreeEntries,
} from './helpers/git.mjs';

describe('test harness', () => {
  let src;
  let ofs;
  let ref;
  before(() => {
    ({
      loose: src,
      ofs,
      ref,
    } = richStorageVariants(['loose', 'ofs', 'ref'], {
      smallFiles: 12,
      prefix: 'harness',
    }));
  });

  /** A fresh clone checked out by git itself. */
  function byGit(repo, ref) {
    const dir = freshClone(repo);
    if (ref) git(dir, ['checkout', '-q', '-f', ref, '--']);
    else git(dir, ['reset', '-q', '--hard']);
    return dir;
  }

  test('freshClone: only .git, no index, storage kept (packs, deltas, loose)', () => {
    for (const [repo, kind] of [
      [src, 'loose'],
      [ofs, 'ofs'],
      [ref, 'ref'],
    ]) {
      const dir = freshClone(repo);
      assert.deepEqual(worktreeEntries(dir), []);
      assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')));
      assertStorage(dir, kind);
    }
  });

  test("freshClone's storage comparison tells a repacked copy apart", () => {
    assert.deepEqual(storageFiles(freshClone(ofs, { method: 'copy' })), storageFiles(ofs.dir));
    assert.notDeepEqual(storageFiles(ofs.dir), storageFiles(ref.dir));
    assert.notDeepEqual(storageFiles(ofs.dir), storageFiles(src.dir));
    const lost = ofs.copy('lost-loose');
    git(lost.dir, ['commit', '-q', '--allow-empty', '-m', 'one more loose object']);
    assert.notDeepEqual(storageFiles(lost.dir), storageFiles(ofs.dir));
  });

  test('storage assertions tell the kinds apart', () => {
    assert.throws(() => assertStorage(ofs.dir, 'ref'), /REF_DELTA|OFS_DELTA/);
    assert.throws(() => assertStorage(ref.dir, 'ofs'), /OFS_DELTA|REF_DELTA/);
    assert.throws(() => assertStorage(src.dir, 'ofs'), /pack count/);
    assert.throws(() => assertStorage(ofs.dir, 'loose'), /found packs/);
    const s = describeStorage(ofs.dir);
    assert.ok(s.target.maxDepth >= 2, `expected delta chains in HEAD, got ${s.target.maxDepth}`);
  });

  test("git's own checkout passes the oracle", () => {
    const dir = byGit(ofs);
    const oracle = assertMatchesGit(dir, ofs);
    assert.ok(oracle.files > 20 && oracle.symlinks > 3 && oracle.gitlinks === 2);
  });

  const damage = [
    ['a flipped byte', /content differs/, (d) => flip(path.join(d, 'README.md'))],
    ['a lost exec bit', /mode/, (d) => fs.chmodSync(path.join(d, 'bin/run.sh'), 0o644)],
    ['a retargeted symlink', /symlink ->/, (d) => relink(path.join(d, 'link-src'), 'docs')],
    ['a file instead of a symlink', /type file/, (d) => replaceWithFile(path.join(d, 'link-src'))],
    ['an extra file', /unexpected/, (d) => fs.writeFileSync(path.join(d, 'extra'), '')],
    ['a missing file', /missing/, (d) => fs.rmSync(path.join(d, 'empty.txt'))],
    [
      'a missing gitlink directory',
      /missing: vendor\/sub/,
      (d) => fs.rmdirSync(path.join(d, 'vendor/sub')),
    ],
  ];
  for (const [label, re, hurt] of damage) {
    test(`worktree comparison catches ${label}`, () => {
      const dir = byGit(ofs);
      hurt(dir);
      assert.throws(() => assertSameWorktree(dir, gitOracle(ofs)), re);
    });
  }

  test('indexListing: one git call reads what ls-files -s, -v and --debug print', () => {
    const dir = byGit(ofs);
    fs.writeFileSync(path.join(dir, 'new\nline\tname'), 'odd name\n');
    git(dir, ['add', '--', 'new\nline\tname']);
    git(dir, ['update-index', '--assume-unchanged', 'README.md']);
    const listing = indexListing(dir);
    assert.equal(listing.lsFiles, git(dir, ['ls-files', '-s', '-z']));
    assert.equal(listing.lsFilesV, git(dir, ['ls-files', '-v', '-z']));
    assert.ok(listing.lsFilesV.includes('h README.md\0'), 'the assume-unchanged tag');
    const debug = git(dir, ['ls-files', '--debug'])
      .split(/\n(?! )/)
      .filter(Boolean);
    assert.equal(debug.length, listing.entries.length);
    listing.entries.forEach((e, i) => {
      const t = `  ctime: ${e.ctimeSec}:${e.ctimeNsec}\n  mtime: ${e.mtimeSec}:${e.mtimeNsec}\n`;
      assert.ok(debug[i].includes(t), `${e.name}: ${debug[i]}`);
      assert.ok(debug[i].includes(`ino: ${e.ino}\n`) && debug[i].includes(`flags: ${e.flags}`));
    });
  });

  test('stale stat data in the index is caught (and by git diff-files)', () => {
    const dir = byGit(ofs);
    fs.utimesSync(path.join(dir, 'README.md'), 1_000_000, 1_000_000);
    assert.throws(() => assertIndexStatMatchesDisk(dir), /README\.md: index mtime/);
    assert.throws(() => assertMatchesGit(dir, ofs), /stat/);
  });

  test('a wrong HEAD is caught', () => {
    const dir = byGit(ofs);
    git(dir, ['update-ref', '--no-deref', 'HEAD', git(dir, ['rev-parse', 'HEAD']).trim()]);
    assert.throws(() => assertMatchesGit(dir, ofs), /HEAD/);
  });

  test('a missing index entry is caught', () => {
    const dir = byGit(ofs);
    git(dir, ['rm', '-q', '--cached', 'README.md']);
    assert.throws(() => assertMatchesGit(dir, ofs), /ls-files/);
  });

  test('a different ref is caught', () => {
    const dir = byGit(ofs, 'v1.0');
    assert.throws(() => assertMatchesGit(dir, ofs));
  });

  test('summary checks fail on wrong numbers and on the pool rule', () => {
    const dir = byGit(ofs);
    const oracle = assertMatchesGit(dir, ofs);
    const good = {
      mode: 'fresh',
      created: oracle.entries,
      updated: 0,
      deleted: 0,
      commit: oracle.commit,
      tree: oracle.tree,
      ref: oracle.symbolicRef,
      detached: false,
      entries: oracle.entries,
      files: oracle.files,
      symlinks: oracle.symlinks,
      gitlinks: oracle.gitlinks,
      bytes: oracle.fileBytes,
      pool: { used: true, workers: 2, files: oracle.files },
      filters: { files: 0, delayed: 0, failed: [] },
      threshold: 0,
      inflater: 'zlib',
      openat2: true,
      collisions: [],
      timings: { plan: 1, write: 2, index: 1, total: 4 },
    };
    assertSummary(good, oracle, { workers: 2, threshold: 0 });
    assert.throws(() => assertSummary({ ...good, files: good.files - 1 }, oracle), /files/);
    assert.throws(() => assertSummary({ ...good, bytes: 1 }, oracle), /bytes/);
    assert.throws(
      () => assertSummary({ ...good, pool: { ...good.pool, files: 1 } }, oracle),
      /pool\.files/,
    );
    assert.throws(() => assertSummary({ ...good, detached: true }, oracle), /detached/);
    assert.throws(() => assertSummary({ ...good, inflater: 'miniz' }, oracle), /inflater/);
    assert.throws(() => assertPoolRule(good, 1, 0), /pool\.used/);
    assert.throws(() => assertPoolRule(good, 2, 1e9), /pool\.used/);
    assert.throws(
      () => assertPoolRule({ ...good, pool: { used: true, workers: 3 } }, 2, 0),
      /workers/,
    );
  });
});

function flip(file) {
  const buf = fs.readFileSync(file);
  buf[Math.floor(buf.length / 2)] ^= 1;
  fs.writeFileSync(file, buf);
}

function relink(link, target) {
  fs.rmSync(link);
  fs.symlinkSync(target, link);
}

function replaceWithFile(link) {
  fs.rmSync(link);
  fs.writeFileSync(link, 'src');
}
