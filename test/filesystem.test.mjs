// Filesystem detection: the mount table's entry for the worktree (longest mount point that is a
// path prefix, FUSE's subtype), which types are network ones, what the summary reports, and the
// concurrent mkdir used there.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import {
  detectFilesystem,
  isNetworkType,
  mountOf,
  parseMountinfo,
} from '../dist/write/filesystem.js';
import { execute } from '../dist/write/execute.js';
import { loadAddon } from '../dist/addon.js';
import { WorktreeDir } from '../dist/worktree.js';
import { Repo, freshClone, git, tmpDir } from './helpers/git.mjs';

const TABLE = [
  '26 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '41 26 0:38 / /mnt/t rw,relatime - tmpfs tmpfs rw,size=6291456k',
  '51 26 0:40 / /srv/net rw,nosuid shared:7 - fuse.sshfs root@10.0.0.2:/export rw,user_id=0',
  '52 26 0:41 / /srv/net2 rw - nfs4 server:/vol rw,vers=4.2',
  '53 26 0:42 / /media/fat\\040disk rw - fuse.fusefat /dev/loop3 rw',
  '54 51 0:43 / /srv/net/inner rw - ext4 /dev/loop4 rw',
].join('\n');

describe('filesystem detection', () => {
  const mounts = parseMountinfo(TABLE);

  test('mountinfo is parsed, optional fields and escapes included', () => {
    assert.equal(mounts.length, 6);
    assert.deepEqual(mounts[2], {
      mountPoint: '/srv/net',
      type: 'fuse.sshfs',
      source: 'root@10.0.0.2:/export',
    });
    assert.equal(mounts[4].mountPoint, '/media/fat disk');
  });

  test('the longest mount point that is a path prefix wins', () => {
    assert.equal(mountOf(mounts, '/srv/net/repo').type, 'fuse.sshfs');
    assert.equal(mountOf(mounts, '/srv/net').type, 'fuse.sshfs');
    assert.equal(
      mountOf(mounts, '/srv/network/repo').type,
      'ext4',
      'a prefix of a name is not a parent',
    );
    assert.equal(mountOf(mounts, '/srv/net/inner/x').type, 'ext4');
    assert.equal(mountOf(mounts, '/srv/net2/a').type, 'nfs4');
    assert.equal(mountOf(mounts, '/media/fat disk/a').type, 'fuse.fusefat');
  });

  test('network types: NFS, SMB, sshfs, 9p, Ceph, Lustre; not local FUSE', () => {
    for (const t of ['nfs', 'nfs4', 'cifs', 'smb3', 'fuse.sshfs', '9p', 'ceph', 'lustre']) {
      assert.equal(isNetworkType(t), true, t);
    }
    for (const t of ['ext4', 'xfs', 'btrfs', 'tmpfs', 'fuse.fusefat', 'fuseblk', 'overlay']) {
      assert.equal(isNetworkType(t), false, t);
    }
  });

  test('the real filesystem of a temp directory is found and local', () => {
    const fs = detectFilesystem(process.cwd());
    assert.equal(typeof fs.type, 'string');
    assert.match(fs.magic, /^0x[0-9a-f]+$/);
    assert.equal(fs.network, false);
  });

  test('the summary reports it; explicit workers and checkout.workers still win', async () => {
    const src = Repo.init('fs-summary');
    src.write('a.txt', 'a\n');
    src.commit('one');
    const dir = freshClone(src, { prefix: 'fs-summary' });
    git(dir, ['config', 'checkout.workers', '3']);
    const s = await checkout(dir, { racyWait: false });
    assert.deepEqual(Object.keys(s.filesystem).sort(), [
      'magic',
      'mountPoint',
      'network',
      'source',
      'type',
    ]);
    assert.equal(s.filesystem.network, false);
    assert.equal(s.workers, 3);
  });
});

describe('directories made concurrently (network filesystems)', () => {
  const plan = (dirs, replaceInTheWay = false, deletes = []) => ({
    result: { count: 0 },
    deletes,
    rmdirs: [],
    clears: [],
    dirs,
    gitlinks: [],
    files: [],
    symlinks: [],
    replace: new Uint8Array(0),
    write: new Uint8Array(0),
    replaceInTheWay,
  });
  const settings = (root) => ({
    root,
    worktree: new WorktreeDir(loadAddon(), root),
    dirThreads: 4,
    pool: null,
    streamThreshold: 0,
    sync: 0,
    concurrentDirs: true,
    perDir: 2,
    symlinks: true,
    onProgress: undefined,
    signal: undefined,
  });

  test('every depth made, parents first; an existing directory is kept', async () => {
    const root = tmpDir('mkdirs');
    fs.mkdirSync(path.join(root, 'a'));
    const dirs = ['a', 'b', 'a/x', 'b/y', 'b/z', 'a/x/deep', 'b/y/deep'];
    await execute(null, plan(dirs), settings(root));
    for (const d of dirs) assert.ok(fs.statSync(path.join(root, d)).isDirectory(), d);
  });

  test('removals unlinked on several threads: each file once, a missing one is not an error', async () => {
    const root = tmpDir('unlinks');
    const deletes = [];
    for (let d = 0; d < 6; d++) {
      fs.mkdirSync(path.join(root, `d${d}`));
      for (let i = 0; i < 10; i++) {
        fs.writeFileSync(path.join(root, `d${d}`, `f${i}`), 'x');
        deletes.push({ path: `d${d}/f${i}`, dir: false });
      }
    }
    deletes.push({ path: 'gone/already', dir: false });
    fs.writeFileSync(path.join(root, 'd0', 'untracked'), 'kept');
    await execute(null, plan([], false, deletes), settings(root));
    for (let d = 0; d < 6; d++) {
      const left = fs.readdirSync(path.join(root, `d${d}`));
      assert.deepEqual(left, d === 0 ? ['untracked'] : [], `d${d}`);
    }
    // A removal that fails for another reason stops the checkout with the path named.
    fs.mkdirSync(path.join(root, 'd1', 'f0'));
    fs.writeFileSync(path.join(root, 'd1', 'f0', 'inside'), 'x');
    const again = Array.from({ length: 20 }, (_, i) => ({ path: `d1/f${i}`, dir: false }));
    await assert.rejects(execute(null, plan([], false, again), settings(root)), /d1\/f0/);
  });

  test('a file or symlink in the way stops it, unless forced', async () => {
    const root = tmpDir('mkdirs');
    fs.writeFileSync(path.join(root, 'f'), 'x');
    fs.symlinkSync('/tmp', path.join(root, 'l'));
    await assert.rejects(execute(null, plan(['f', 'f/sub']), settings(root)), {
      code: 'ERR_WOULD_OVERWRITE',
    });
    await assert.rejects(execute(null, plan(['l', 'l/sub']), settings(root)), {
      code: 'ERR_WOULD_OVERWRITE',
    });
    await execute(null, plan(['f', 'f/sub', 'l', 'l/sub'], true), settings(root));
    for (const d of ['f/sub', 'l/sub']) {
      assert.ok(fs.lstatSync(path.join(root, d)).isDirectory(), d);
    }
    assert.ok(fs.lstatSync(path.join(root, 'l')).isDirectory(), 'the link was replaced');
  });
});
