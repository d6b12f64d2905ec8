// The store of worktree-ready files (the `store` option, --store): trees materialized and
// checked out through it are git's (bytes, modes, an index git finds clean), whether each
// file came from the pack or from the store; one blob under two conversions is two entries;
// a damaged entry (truncated, a symlink planted under its name) is never copied into a tree;
// a killed process leaves no entry that a later run imports; the bound prunes the least
// recently used; on XFS with reflink the second tree shares the first one's extents.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkout, createEngine, materialize, PcheckoutError } from '../dist/index.js';
import { assertSameWorktree, checkoutMatchesGit, gitOracle } from './helpers/compare.mjs';
import { Repo, git, tmpDir, tmpPath } from './helpers/git.mjs';

const CLI = path.join(import.meta.dirname, '..', 'dist', 'cli.cjs');
const quiet = { racyWait: false };

/** A repository of `n` small files over a few directories, an exec bit, a symlink. */
function smallRepo(n = 300, salt = '') {
  const repo = Repo.init('store');
  for (let i = 0; i < n; i++) {
    const dir = repo.abs(`d${i % 12}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.c`), `${salt}file ${i}\n`.repeat(1 + (i % 40)));
  }
  fs.writeFileSync(repo.abs('run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  fs.symlinkSync('run.sh', repo.abs('link'));
  git(repo.dir, ['add', '-A']);
  git(repo.dir, ['commit', '-q', '-m', 'one']);
  return repo;
}

/** The oracle of the repository's HEAD, and the target must equal it and be clean in git's eyes. */
function assertTargetIsGit(repo, target) {
  assertSameWorktree(target, gitOracle(repo.dir, { ref: 'HEAD' }));
  const env = { GIT_INDEX_FILE: path.join(target, '.git', 'index') };
  git(repo.dir, ['--work-tree', target, 'diff-files', '--quiet'], { env });
  git(repo.dir, ['--work-tree', target, 'diff-index', '--cached', '--quiet', 'HEAD'], { env });
}

/** Every entry file in a store: relative name → size. */
function storeEntries(store) {
  const root = path.join(store, 'v1');
  const out = new Map();
  for (const d of fs.readdirSync(root)) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const name of fs.readdirSync(path.join(root, d)))
      out.set(`${d}/${name}`, fs.statSync(path.join(root, d, name)).size);
  }
  return out;
}

const regularFiles = (repo) =>
  git(repo.dir, ['ls-files', '-s'])
    .split('\n')
    .filter((l) => /^100/.test(l)).length;

describe('store', () => {
  test('a second tree comes from the store, and both are git’s', async () => {
    const repo = smallRepo();
    const store = tmpPath('store');
    const files = regularFiles(repo);
    const t1 = tmpPath('t1');
    const s1 = await materialize(repo.dir, t1, { ...quiet, store });
    assert.equal(s1.store.inserted, files);
    assert.equal(s1.store.imported, 0);
    assert.equal(
      storeEntries(store).size,
      new Set(
        git(repo.dir, ['ls-files', '-s'])
          .split('\n')
          .filter((l) => /^100/.test(l))
          .map((l) => l.split(' ')[1]),
      ).size,
    );
    assertTargetIsGit(repo, t1);
    const t2 = tmpPath('t2');
    const s2 = await materialize(repo.dir, t2, { ...quiet, store, workers: 1 });
    assert.equal(s2.store.imported, files);
    assert.equal(s2.store.inserted, 0);
    assert.equal(s2.store.repaired, 0);
    assert.equal(s2.store.failed, 0, s2.store.error);
    assert.ok(['reflink', 'copy', 'write'].includes(s2.store.method), s2.store.method);
    assert.equal(s2.bytes, s1.bytes);
    assertTargetIsGit(repo, t2);
    // The files are the tree's own: an edit in one tree changes neither the store nor the other.
    fs.appendFileSync(path.join(t2, 'd0', 'f0.c'), 'edited\n');
    const t3 = tmpPath('t3');
    await materialize(repo.dir, t3, { ...quiet, store });
    assertTargetIsGit(repo, t3);
    assertSameWorktree(t1, gitOracle(repo.dir, { ref: 'HEAD' }));
  });

  test('a checkout through the store, in process and on the pool, is git’s', async () => {
    const repo = smallRepo(150, 'co ');
    const store = tmpPath('store');
    const first = await checkoutMatchesGit(checkout, repo.dir, {
      ...quiet,
      store,
      workers: 2,
      threshold: 1,
    });
    assert.equal(first.summary.store.inserted, regularFiles(repo));
    // Below the threshold: the in-process writer imports the same way.
    const second = await checkoutMatchesGit(checkout, repo.dir, {
      ...quiet,
      store,
      threshold: 100000,
    });
    assert.equal(second.summary.pool.used, false);
    assert.equal(second.summary.store.imported, regularFiles(repo));
    assert.equal(git(second.dir, ['status', '--porcelain']), '');
  });

  test('one blob under two eol settings is two entries, each imported where it belongs', async () => {
    const repo = Repo.init('store-eol');
    fs.writeFileSync(repo.abs('.gitattributes'), '*.txt text eol=crlf\n*.dat -text\n*.id ident\n');
    for (const name of ['a.txt', 'b.dat', 'c.id']) fs.writeFileSync(repo.abs(name), 'x\ny $Id$\n');
    git(repo.dir, ['add', '-A']);
    git(repo.dir, ['commit', '-q', '-m', 'eol']);
    const blob = git(repo.dir, ['rev-parse', 'HEAD:a.txt']).trim();
    const store = tmpPath('store');
    await materialize(repo.dir, tmpPath('t'), { ...quiet, store });
    const names = [...storeEntries(store).keys()].filter((n) =>
      n.replace('/', '').startsWith(blob),
    );
    assert.equal(names.length, 3, `entries for ${blob}: ${names.join(', ')}`);
    assert.ok(names.includes(`${blob.slice(0, 2)}/${blob.slice(2)}`), 'the blob as it is');
    const t2 = tmpPath('t2');
    const s2 = await materialize(repo.dir, t2, { ...quiet, store });
    assert.equal(s2.store.imported, 4);
    assert.equal(fs.readFileSync(path.join(t2, 'a.txt'), 'latin1'), 'x\r\ny $Id$\r\n');
    assert.equal(fs.readFileSync(path.join(t2, 'b.dat'), 'latin1'), 'x\ny $Id$\n');
    assert.equal(fs.readFileSync(path.join(t2, 'c.id'), 'latin1'), `x\ny $Id: ${blob} $\n`);
    assertTargetIsGit(repo, t2);
  });

  test('a file through a filter driver is filtered each time, never taken from the store', async () => {
    const repo = Repo.init('store-filter');
    fs.writeFileSync(repo.abs('.gitattributes'), '*.up filter=up\n');
    fs.writeFileSync(repo.abs('a.up'), 'shout\n');
    fs.writeFileSync(repo.abs('plain.txt'), 'shout\n');
    git(repo.dir, ['add', '-A']);
    git(repo.dir, ['commit', '-q', '-m', 'filter']);
    git(repo.dir, ['config', 'filter.up.smudge', 'tr a-z A-Z']);
    git(repo.dir, ['config', 'filter.up.clean', 'tr A-Z a-z']);
    const store = tmpPath('store');
    const s1 = await materialize(repo.dir, tmpPath('t'), { ...quiet, store });
    assert.equal(s1.filters.files, 1);
    const t2 = tmpPath('t2');
    const s2 = await materialize(repo.dir, t2, { ...quiet, store });
    assert.equal(s2.filters.files, 1, 'the driver ran again');
    // .gitattributes and plain.txt (the same blob as a.up, unfiltered) came from the store.
    assert.equal(s2.store.imported, 2);
    assert.equal(fs.readFileSync(path.join(t2, 'a.up'), 'utf8'), 'SHOUT\n');
    assert.equal(fs.readFileSync(path.join(t2, 'plain.txt'), 'utf8'), 'shout\n');
    const oracle = tmpPath('oracle');
    git(repo.dir, ['worktree', 'add', '-q', '--detach', oracle, 'HEAD']);
    for (const name of ['a.up', 'plain.txt', '.gitattributes'])
      assert.equal(
        fs.readFileSync(path.join(t2, name), 'utf8'),
        fs.readFileSync(path.join(oracle, name), 'utf8'),
        name,
      );
  });

  test('damaged entries are removed and rewritten from the pack, never copied', async () => {
    const repo = smallRepo(200, 'dmg ');
    const store = tmpPath('store');
    await materialize(repo.dir, tmpPath('t'), { ...quiet, store });
    const entries = [...storeEntries(store).keys()];
    const root = path.join(store, 'v1');
    // Truncated, emptied, grown, and one replaced by a symlink to a file of other bytes.
    const decoy = path.join(tmpDir('decoy'), 'other');
    fs.writeFileSync(decoy, 'not the blob\n');
    entries.forEach((name, k) => {
      const p = path.join(root, name);
      if (k % 4 === 0) fs.truncateSync(p, Math.floor(fs.statSync(p).size / 2));
      else if (k % 4 === 1) fs.truncateSync(p, 0);
      else if (k % 4 === 2) fs.appendFileSync(p, 'more');
    });
    const planted = entries[3];
    fs.rmSync(path.join(root, planted));
    fs.symlinkSync(decoy, path.join(root, planted));
    const damaged = entries.filter((_, k) => k % 4 !== 3).length;
    const t2 = tmpPath('t2');
    const s2 = await materialize(repo.dir, t2, { ...quiet, store });
    assert.ok(s2.store.repaired >= damaged, `repaired ${s2.store.repaired} of ${damaged}`);
    assertTargetIsGit(repo, t2);
    // Whole again: the next tree takes everything from the store.
    const t3 = tmpPath('t3');
    const s3 = await materialize(repo.dir, t3, { ...quiet, store });
    assert.equal(s3.store.repaired, 0);
    assert.equal(s3.store.imported, regularFiles(repo));
    assert.ok(!fs.lstatSync(path.join(root, planted)).isSymbolicLink(), 'the symlink was replaced');
    assertTargetIsGit(repo, t3);
  });

  test('the link mode: read-only files that are the store’s entries, as git’s bytes and exec bits', async () => {
    const repo = smallRepo(120, 'link ');
    const store = tmpPath('store');
    const opts = { ...quiet, store: { dir: store, link: true } };
    const t1 = tmpPath('t1');
    const s1 = await materialize(repo.dir, t1, opts);
    assert.equal(s1.store.inserted, regularFiles(repo));
    const t2 = tmpPath('t2');
    const s2 = await materialize(repo.dir, t2, opts);
    assert.equal(s2.store.method, 'hardlink');
    assert.equal(s2.store.imported, regularFiles(repo));
    const oracle = gitOracle(repo.dir, { ref: 'HEAD' });
    for (const [rel, e] of oracle.snapshot) {
      if (e.type !== 'file') continue;
      for (const t of [t1, t2]) {
        const st = fs.statSync(path.join(t, rel));
        assert.equal(st.mode & 0o222, 0, `${t}/${rel} is read-only`);
        assert.equal(st.mode & 0o100, e.perm & 0o100, `${rel}: exec bit as git's`);
        assert.ok(
          fs.readFileSync(path.join(t, rel)).equals(fs.readFileSync(path.join(oracle.dir, rel))),
          rel,
        );
      }
      assert.ok(fs.statSync(path.join(t2, rel)).nlink >= 2, `${rel} is linked`);
    }
    assert.equal(fs.readlinkSync(path.join(t2, 'link')), 'run.sh');
    // git finds the index clean (the stat data it holds may be older: git re-reads and agrees).
    const env = { GIT_INDEX_FILE: path.join(t2, '.git', 'index') };
    git(repo.dir, ['--work-tree', t2, 'diff-files', '--quiet'], { env });
    // A refresh of the first tree (whose entries' ctime moved) keeps every file.
    const again = await materialize(repo.dir, t1, opts);
    assert.equal(again.files, 0);
    assert.equal(again.updated, 0);
  });

  test('a process killed while filling the store leaves nothing a later run imports', () => {
    const repo = smallRepo(2000, 'kill ');
    const store = tmpPath('store');
    // Two processes fill the store at once; one is killed after its 3rd chunk of files.
    const run = (target, env = {}) =>
      spawnSync(
        process.execPath,
        [CLI, '--no-racy-wait', '-q', '-w', '2', '--store', store, '--target', target, repo.dir],
        {
          env: { ...process.env, ...env },
          encoding: 'utf8',
        },
      );
    const both = [
      spawnSync(
        'sh',
        [
          '-c',
          `"${process.execPath}" "${CLI}" --no-racy-wait -q -w 2 --store "${store}" --target "${tmpPath('k1')}" "${repo.dir}" & PCHECKOUT_TEST_KILL_AT=4 "${process.execPath}" "${CLI}" --no-racy-wait -q -w 2 --store "${store}" --target "${tmpPath('k2')}" "${repo.dir}"; echo "killed: $?"; wait`,
        ],
        { encoding: 'utf8' },
      ),
    ];
    assert.match(both[0].stdout, /killed: 137/, both[0].stderr);
    // Every entry under its final name is whole: a new tree imports them all as they are.
    const t = tmpPath('after');
    const res = run(t);
    assert.equal(res.status, 0, res.stderr);
    const json = spawnSync(
      process.execPath,
      [CLI, '--no-racy-wait', '--json', '--store', store, '--target', tmpPath('after2'), repo.dir],
      { encoding: 'utf8' },
    );
    const s = JSON.parse(json.stdout);
    assert.equal(s.store.repaired, 0);
    assert.equal(s.store.imported, regularFiles(repo));
    assertTargetIsGit(repo, t);
  });

  test('the bound prunes the least recently used entries', async () => {
    const old = smallRepo(200, 'old ');
    const recent = smallRepo(200, 'recent ');
    const store = tmpPath('store');
    await materialize(old.dir, tmpPath('t'), { ...quiet, store });
    const root = path.join(store, 'v1');
    const oldNames = new Set(storeEntries(store).keys());
    // Two days unused.
    const then = new Date(Date.now() - 2 * 86400_000);
    for (const n of oldNames) fs.utimesSync(path.join(root, n), then, then);
    const keep = [...oldNames][0];
    // An import refreshes an entry's time (at most once an hour).
    fs.utimesSync(path.join(root, keep), then, then);
    const s1 = await materialize(recent.dir, tmpPath('t'), { ...quiet, store });
    const recentBytes = s1.store.insertedBytes;
    const oldBytes = [...oldNames].reduce((n, k) => n + fs.statSync(path.join(root, k)).size, 0);
    const maxBytes = recentBytes + Math.floor(oldBytes / 2);
    const s2 = await materialize(recent.dir, tmpPath('t'), {
      ...quiet,
      store: { dir: store, maxBytes },
    });
    assert.equal(s2.store.imported, regularFiles(recent));
    assert.ok(s2.store.pruned > 0, 'pruned something');
    const left = storeEntries(store);
    const total = [...left.values()].reduce((a, b) => a + b, 0);
    assert.ok(total <= maxBytes, `${total} bytes left, bound ${maxBytes}`);
    // Every entry the recent tree used is still there; only old ones went.
    const s3 = await materialize(recent.dir, tmpPath('t'), {
      ...quiet,
      store: { dir: store, maxBytes },
    });
    assert.equal(s3.store.imported, regularFiles(recent));
    assert.equal(s3.store.inserted, 0);
    assert.ok([...left.keys()].filter((n) => oldNames.has(n)).length < oldNames.size);
  });

  test('an engine’s store is used by its calls; bad store options are refused', async () => {
    const repo = smallRepo(50, 'engine ');
    const store = tmpPath('store');
    const engine = createEngine({ store });
    try {
      const s1 = await engine.materialize(repo.dir, tmpPath('t'), quiet);
      assert.equal(s1.store.inserted, regularFiles(repo));
      const s2 = await engine.materialize(repo.dir, tmpPath('t'), quiet);
      assert.equal(s2.store.imported, regularFiles(repo));
      assert.equal(s2.store.dir, store);
    } finally {
      await engine.close();
    }
    const s = await materialize(repo.dir, tmpPath('t'), quiet);
    assert.equal(s.store, null);
    for (const bad of [
      '',
      { dir: store, maxBytes: 0 },
      { dir: store, other: 1 },
      { dir: store, link: 1 },
      7,
    ]) {
      await assert.rejects(
        materialize(repo.dir, tmpPath('t'), { store: bad }),
        (e) => e instanceof PcheckoutError && e.code === 'ERR_INVALID_OPTION',
      );
    }
    const cli = spawnSync(
      process.execPath,
      [CLI, '--store-max-bytes', '10', '--target', tmpPath('t'), repo.dir],
      { encoding: 'utf8' },
    );
    assert.equal(cli.status, 129);
    assert.match(cli.stderr, /--store-max-bytes needs --store/);
  });

  test('a store or a target that cannot be made stops the call at once, nothing written', (t) => {
    // Under /proc mkdir says ENOENT although the parent exists: Node's recursive mkdirSync
    // loops forever there (this test's timeout catches a regression).
    if (!fs.existsSync('/proc/self/stat')) return t.skip('no procfs at /proc');
    const repo = smallRepo(5, 'proc ');
    const run = (...args) =>
      spawnSync(process.execPath, [CLI, ...args, repo.dir], {
        encoding: 'utf8',
        timeout: 20_000,
        killSignal: 'SIGKILL',
      });
    const target = tmpPath('t');
    const a = run('--store', '/proc/pcheckout-nope/store', '--target', target);
    assert.equal(a.signal, null, 'the call ended by itself');
    assert.equal(a.status, 128, a.stderr);
    assert.match(
      a.stderr,
      /ERR_IO: cannot create the store \/proc\/pcheckout-nope\/store: .*ENOENT/,
    );
    assert.equal(fs.existsSync(target), false, 'the target is not made when the store cannot be');
    const b = run('--target', '/proc/pcheckout-nope/t');
    assert.equal(b.signal, null, 'the call ended by itself');
    assert.equal(b.status, 128, b.stderr);
    assert.match(b.stderr, /ERR_IO: cannot create \/proc\/pcheckout-nope\/t: .*ENOENT/);
  });
});

describe('store on a filesystem without user attributes', () => {
  test('a FAT store cannot record sizes: the call says so once per file and writes from the pack', async (t) => {
    const dir = tmpDir('fat');
    const image = path.join(dir, 'fat.img');
    const mnt = path.join(dir, 'mnt');
    fs.mkdirSync(mnt);
    fs.writeFileSync(image, '');
    fs.truncateSync(image, 32 << 20);
    const mkfs = spawnSync('mkfs.vfat', [image], { encoding: 'utf8' });
    const fuse =
      mkfs.status === 0 && spawnSync('fusefat', ['-o', 'rw+', image, mnt], { encoding: 'utf8' });
    if (!fuse || fuse.error || fuse.status !== 0) {
      const why = `no FAT image through FUSE (dosfstools, fusefat, /dev/fuse): ${(fuse && (fuse.stderr || fuse.error)) || mkfs.stderr || mkfs.error}`;
      console.log(`# ${why}`);
      t.skip(why);
      return;
    }
    try {
      const repo = smallRepo(40, 'fat ');
      const store = path.join(mnt, 'store');
      for (const name of ['t1', 't2']) {
        const target = tmpPath(name);
        const s = await materialize(repo.dir, target, { ...quiet, store });
        assert.equal(s.store.inserted, 0);
        assert.equal(s.store.imported, 0);
        assert.equal(s.store.failed, regularFiles(repo));
        assert.match(s.store.error, /cannot record the size of .*: Operation not supported/);
        assertTargetIsGit(repo, target);
      }
    } finally {
      spawnSync('fusermount', ['-u', mnt]);
    }
  });
});

/** An XFS image with reflink, mounted; null (and why) when this machine cannot. */
function mountXfs() {
  if (process.getuid?.() !== 0) return { why: 'not root (mount needs it)' };
  const mkfs = spawnSync('mkfs.xfs', ['-V'], { encoding: 'utf8' });
  if (mkfs.error) return { why: 'mkfs.xfs not installed (apt-get install xfsprogs)' };
  const image = path.join(tmpDir('xfs-image'), 'xfs.img');
  fs.writeFileSync(image, '');
  fs.truncateSync(image, 320 * 1024 * 1024);
  const made = spawnSync('mkfs.xfs', ['-q', '-m', 'reflink=1', image], { encoding: 'utf8' });
  if (made.status !== 0) return { why: `mkfs.xfs failed: ${made.stderr.trim()}` };
  const dir = tmpDir('xfs');
  const mounted = spawnSync('mount', ['-o', 'loop', image, dir], { encoding: 'utf8' });
  if (mounted.status !== 0) return { why: `mount -o loop failed: ${mounted.stderr.trim()}` };
  return {
    dir,
    unmount: () => {
      spawnSync('umount', [dir]);
      fs.rmSync(image, { force: true });
    },
  };
}

const usedBytes = (dir) => {
  const st = fs.statfsSync(dir);
  return (st.blocks - st.bfree) * st.bsize;
};

describe('store on XFS with reflink', () => {
  test('the second tree is reflinked: the same bytes, almost no new space', async (t) => {
    const xfs = mountXfs();
    if (xfs.why) {
      console.log(`# store on XFS skipped: ${xfs.why}`);
      t.skip(xfs.why);
      return;
    }
    try {
      const repo = Repo.init('store-xfs');
      // 40 files of 256 KiB: extents worth sharing.
      for (let i = 0; i < 40; i++) {
        const bytes = Buffer.alloc(256 * 1024);
        for (let k = 0; k < bytes.length; k += 4)
          bytes.writeUInt32LE((k * 2654435761 + i) >>> 0, k);
        fs.writeFileSync(repo.abs(`blob${i}.bin`), bytes);
      }
      fs.writeFileSync(repo.abs('tool.sh'), '#!/bin/sh\n', { mode: 0o755 });
      git(repo.dir, ['add', '-A']);
      git(repo.dir, ['commit', '-q', '-m', 'big']);
      const store = path.join(xfs.dir, 'store');
      const s1 = await materialize(repo.dir, path.join(xfs.dir, 't1'), { ...quiet, store });
      assert.equal(s1.store.inserted, 41, s1.store.error ?? '');
      spawnSync('sync');
      const before = usedBytes(xfs.dir);
      const t2 = path.join(xfs.dir, 't2');
      const s2 = await materialize(repo.dir, t2, { ...quiet, store });
      spawnSync('sync');
      assert.equal(s2.store.method, 'reflink');
      assert.equal(s2.store.imported, 41);
      const grew = usedBytes(xfs.dir) - before;
      assert.ok(grew < s2.bytes / 4, `the second tree took ${grew} bytes for ${s2.bytes} of files`);
      assertTargetIsGit(repo, t2);
    } finally {
      xfs.unmount?.();
    }
  });
});
