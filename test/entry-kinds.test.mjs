// One small repository per kind of entry, each checked out sequentially and through the pool
// (workers 2, threshold 0) and compared with git — so a failure names the feature.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { checkoutMatchesGit } from './helpers/compare.mjs';
import {
  Repo,
  deepDir,
  DEEP_LEVELS,
  fakeCommitId,
  prng,
  randomBytes,
  textLines,
  unicodeNames,
} from './helpers/git.mjs';

const MODES = [
  { name: 'sequential', opts: { workers: 1, threshold: 0 } },
  { name: 'pool', opts: { workers: 2, threshold: 0 } },
];

/** Build a packed repository from `fill(repo)` once, lazily. */
function fixture(name, fill) {
  let repo;
  return () => {
    if (!repo) {
      repo = Repo.init(name);
      fill(repo);
      repo.commit(name);
      repo.gc();
    }
    return repo;
  };
}

function forEachMode(label, getRepo, check) {
  for (const { name, opts } of MODES) {
    test(`${label} (${name})`, async () => {
      const repo = getRepo();
      const result = await checkoutMatchesGit(checkout, repo, opts);
      await check?.(result, opts);
    });
  }
}

describe('entry kinds', () => {
  const execRepo = fixture('exec', (r) => {
    r.write('run.sh', '#!/bin/sh\necho hi\n', { exec: true });
    r.write('plain.txt', 'not executable\n');
    r.write('nested/dir/tool', randomBytes(5000, 3), { exec: true });
    r.write('nested/dir/data', 'data\n');
    r.write('nested/empty-exec', '', { exec: true });
  });
  forEachMode('exec bits', execRepo, ({ dir }) => {
    const mode = (p) => fs.lstatSync(path.join(dir, p)).mode;
    assert.notEqual(mode('run.sh') & 0o100, 0, 'run.sh must be executable');
    assert.notEqual(mode('nested/dir/tool') & 0o100, 0, 'nested/dir/tool must be executable');
    assert.notEqual(mode('nested/empty-exec') & 0o100, 0, 'empty exec file must be executable');
    assert.equal(mode('plain.txt') & 0o111, 0, 'plain.txt must not be executable');
    assert.equal(mode('nested/dir/data') & 0o111, 0, 'data must not be executable');
  });

  const symlinkRepo = fixture('symlinks', (r) => {
    r.write('target.txt', 'target\n');
    r.write('dir/inside.txt', 'inside\n');
    r.symlink('to-file', 'target.txt');
    r.symlink('to-dir', 'dir');
    r.symlink('dangling', 'no/such/path');
    r.symlink('absolute', '/nonexistent/absolute/path');
    r.symlink('chain', 'to-file');
    r.symlink('dir/up', '../target.txt');
    r.symlink('dir/self-dot', '.');
    r.symlink('utf8 链接', 'dir/inside.txt');
    r.symlink('long', 'x/'.repeat(100) + 'end');
  });
  forEachMode('symlinks (file, directory, dangling, absolute, chained)', symlinkRepo, (res) => {
    const { dir, summary } = res;
    for (const p of ['to-file', 'to-dir', 'dangling', 'absolute', 'chain', 'dir/up', 'long']) {
      assert.ok(fs.lstatSync(path.join(dir, p)).isSymbolicLink(), `${p} must be a symlink`);
    }
    assert.equal(fs.readlinkSync(path.join(dir, 'to-dir')), 'dir');
    assert.equal(fs.readlinkSync(path.join(dir, 'dangling')), 'no/such/path');
    assert.equal(summary.symlinks, 9);
  });

  const gitlinkRepo = fixture('gitlinks', (r) => {
    r.write('README', 'has submodules\n');
    r.gitlink('sub', fakeCommitId('a'));
    r.gitlink('deeper/path/to/sub2', fakeCommitId('b'));
  });
  forEachMode('gitlinks (commit ids absent from the object store)', gitlinkRepo, (res) => {
    const { dir, summary } = res;
    for (const p of ['sub', 'deeper/path/to/sub2']) {
      const st = fs.lstatSync(path.join(dir, p));
      assert.ok(st.isDirectory(), `${p}: git creates an empty directory for a gitlink`);
      assert.deepEqual(fs.readdirSync(path.join(dir, p)), []);
    }
    assert.equal(summary.gitlinks, 2);
    assert.equal(summary.files, 1);
  });

  const emptyRepo = fixture('empty-files', (r) => {
    r.write('empty', '');
    r.write('a/empty too', '');
    r.write('a/b/c/.empty', '');
    r.write('not-empty', 'x');
  });
  forEachMode('empty files', emptyRepo, ({ dir, summary }) => {
    assert.equal(fs.statSync(path.join(dir, 'a/b/c/.empty')).size, 0);
    assert.equal(summary.files, 4);
    assert.ok(summary.bytes === 1, `summary.bytes ${summary.bytes}, expected 1`);
  });

  const deepRepo = fixture('deep', (r) => {
    const parts = deepDir.split('/');
    for (let i = 1; i <= parts.length; i += 7) {
      r.write(`${parts.slice(0, i).join('/')}/at-${i}.txt`, `level ${i}\n`);
    }
    r.write(`${deepDir}/bottom.txt`, 'bottom\n');
    r.write(`${deepDir}/bottom-exec`, '#!/bin/sh\n', { exec: true });
    r.symlink(`${deepDir}/link-to-top`, '../'.repeat(DEEP_LEVELS) + 'top.txt');
    r.write('top.txt', 'top\n');
  });
  forEachMode(`deep nesting (${DEEP_LEVELS} levels)`, deepRepo, ({ dir }) => {
    assert.equal(fs.readFileSync(path.join(dir, deepDir, 'bottom.txt'), 'utf8'), 'bottom\n');
    assert.equal(fs.readFileSync(path.join(dir, deepDir, 'link-to-top'), 'utf8'), 'top\n');
  });

  const namesRepo = fixture('names', (r) => {
    for (const name of unicodeNames) r.write(name, `content of ${name}\n`);
    r.write('日本/ルート.txt', '日本語の内容\n');
    r.write('é', 'e acute\n');
    r.write('🎉', 'party\n');
  });
  forEachMode('names with spaces, punctuation and UTF-8', namesRepo, ({ dir }) => {
    for (const name of unicodeNames) {
      assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), `content of ${name}\n`);
    }
    assert.equal(fs.readFileSync(path.join(dir, '日本/ルート.txt'), 'utf8'), '日本語の内容\n');
  });

  // Index order is by full path bytes ('a-b' < 'a.b' < 'a/b' < 'a0'), not by tree order.
  const orderRepo = fixture('order', (r) => {
    for (const n of ['a-b', 'a.b', 'a/b', 'a/b.c/d', 'a0', 'a_b', 'A', 'B/x', 'b', 'a b', 'a+b']) {
      r.write(n, `${n}\n`);
    }
  });
  forEachMode('index sorted by path bytes', orderRepo);

  const binaryRepo = fixture('binary', (r) => {
    const rand = prng(5);
    r.write('random.bin', randomBytes(300_000, 11));
    r.write('zeros.bin', Buffer.alloc(1 << 20));
    r.write('crlf.txt', textLines(rand, 100).join('\r\n') + '\r\n');
    r.write('no-newline.txt', 'no trailing newline');
    r.write('nul-inside.txt', Buffer.from('text\0with\0nuls\n'));
  });
  forEachMode('binary content, CRLF and NUL bytes kept byte for byte', binaryRepo);

  const onlyLinksRepo = fixture('only-links', (r) => {
    r.symlink('l1', 'nowhere');
    r.symlink('d/l2', '../l1');
    r.gitlink('s', fakeCommitId('c'));
  });
  forEachMode('no regular files at all (pool never needed)', onlyLinksRepo, ({ summary }) => {
    assert.equal(summary.files, 0);
    assert.equal(summary.pool.used, false, 'no regular files: nothing for a pool to do');
  });

  const emptyTreeRepo = fixture('empty-tree', () => {});
  forEachMode('a commit with the empty tree', emptyTreeRepo, ({ summary }) => {
    assert.equal(summary.entries, 0);
    assert.equal(summary.tree, '4b825dc642cb6eb9a060e54bf8d69288fbee4904');
  });

  const singleRepo = fixture('single', (r) => r.write('only.txt', 'one file\n'));
  forEachMode('a single file', singleRepo, ({ summary }, opts) => {
    assert.equal(summary.pool.used, opts.workers > 1, 'one file > threshold 0');
  });
});
