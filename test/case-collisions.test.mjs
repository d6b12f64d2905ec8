// Case collisions on a case-insensitive filesystem: a FAT image mounted through FUSE (fusefat,
// as ../shared/DESIGN.md describes the rig). One tree holds FILE_X and file_x, and a directory A
// (A/B) beside a file a. git 2.39 clones it onto the same rig; pcheckout checks out a clone of it
// with the pool on (2 workers, threshold 0). Both must report the same colliding paths, and end
// with the same worktree (names, bytes) and index. FAT keeps no modes and fusefat no chmod, so
// both repositories keep their git directory off the image (--separate-git-dir), with
// core.filemode off and core.ignorecase on, as git would set them on a FAT git directory.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { snapshotTree } from './helpers/compare.mjs';
import { git, gitTry, tmpDir } from './helpers/git.mjs';

const SBIN = { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` };
const run = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8', env: SBIN });

/** Mounts a fresh FAT image through FUSE. Returns { mnt, symlinks } or { skip: reason }. */
function mountFat(dir) {
  const image = path.join(dir, 'fat.img');
  const mnt = path.join(dir, 'mnt');
  fs.mkdirSync(mnt);
  fs.writeFileSync(image, '');
  fs.truncateSync(image, 32 << 20);
  const mkfs = run('mkfs.vfat', ['-n', 'PCHECKOUT', image]);
  if (mkfs.error || mkfs.status !== 0)
    return {
      skip: `mkfs.vfat failed or is missing (Debian: dosfstools): ${mkfs.stderr ?? mkfs.error}`,
    };
  const fuse = run('fusefat', ['-o', 'rw+', image, mnt]);
  if (fuse.error || fuse.status !== 0)
    return {
      skip: `fusefat could not mount the image (Debian: fusefat; needs /dev/fuse): ${fuse.stderr ?? fuse.error}`,
    };
  fs.writeFileSync(path.join(mnt, 'Probe'), 'x');
  if (!fs.existsSync(path.join(mnt, 'probe')))
    return { mnt, skip: 'the FAT mount is case-sensitive' };
  fs.unlinkSync(path.join(mnt, 'Probe'));
  let symlinks = true;
  try {
    fs.symlinkSync('target', path.join(mnt, 'link-probe'));
    fs.unlinkSync(path.join(mnt, 'link-probe'));
  } catch (err) {
    symlinks = err.code;
  }
  return { mnt, symlinks };
}

function unmount(mnt) {
  for (const [cmd, args] of [
    ['fusermount', ['-u', mnt]],
    ['umount', [mnt]],
  ]) {
    if (run(cmd, args).status === 0) return;
  }
}

/** A repository whose one commit holds `files` (path → content; content {link} = symlink). */
function makeRepo(dir, files) {
  git(dir, ['init', '-q', '-b', 'main']);
  const info = [];
  for (const [name, content] of Object.entries(files)) {
    const blob = git(dir, ['hash-object', '-w', '--stdin'], {
      input: typeof content === 'object' ? content.link : content,
    }).trim();
    info.push(`${typeof content === 'object' ? '120000' : '100644'} ${blob}\t${name}\n`);
  }
  git(dir, ['update-index', '--add', '--index-info'], { input: info.join('') });
  git(dir, ['commit', '-q', '-m', 'collide']);
}

const CONFIG = ['-c', 'core.filemode=false', '-c', 'core.ignorecase=true'];

/** The paths git lists in its "have collided" warning. */
function gitCollisions(stderr) {
  assert.match(stderr, /the following paths have collided/);
  return [...stderr.matchAll(/^\s+'(.*)'$/gm)].map((m) => m[1]).sort();
}

/** Per index entry, the blob id of what its path on disk reads as, or '-' when it cannot be read. */
function onDisk(dir) {
  const lines = git(dir, ['ls-files', '-s']).trim().split('\n');
  return lines.map((line) => {
    const [, name] = line.split('\t');
    let data;
    try {
      data = fs.readFileSync(path.join(dir, name));
    } catch {
      return `${name} -`; // absent, or a leading component is a file
    }
    const blob = createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
    return `${name} ${blob}`;
  });
}

/** Names, types and bytes under dir (the git file excluded). */
function contents(dir) {
  const out = [];
  for (const [rel, e] of snapshotTree(dir)) {
    if (rel === '.git') continue;
    out.push(
      `${rel} ${e.type} ${e.type === 'file' ? fs.readFileSync(path.join(dir, rel), 'latin1') : ''}`,
    );
  }
  return out;
}

describe('case collisions on FAT (FUSE)', () => {
  let rig;
  let work;
  before(() => {
    work = tmpDir('fat');
    rig = mountFat(work);
  });
  after(() => {
    if (rig?.mnt) unmount(rig.mnt);
  });

  /** git's clone and pcheckout's checkout of `src` on the image, compared; returns both. */
  async function compareWithGit(src, name) {
    const gitWork = path.join(rig.mnt, `${name}-git`);
    const clone = gitTry(work, [
      'clone',
      '-q',
      ...CONFIG,
      `--separate-git-dir=${work}/${name}-git.git`,
      src,
      gitWork,
    ]);
    assert.equal(clone.status, 0, clone.stderr);
    const pcWork = path.join(rig.mnt, `${name}-pc`);
    git(work, [
      'clone',
      '-q',
      '--no-checkout',
      ...CONFIG,
      `--separate-git-dir=${work}/${name}-pc.git`,
      src,
      pcWork,
    ]);
    const summary = await checkout(pcWork, { workers: 2, threshold: 0, racyWait: false });
    assert.equal(summary.pool.used, true, 'the pool wrote the files');
    assert.deepEqual(summary.collisions, gitCollisions(clone.stderr), 'the colliding paths');
    assert.deepEqual(contents(pcWork), contents(gitWork), 'the worktree');
    assert.equal(git(pcWork, ['ls-files', '-s']), git(gitWork, ['ls-files', '-s']), 'the index');
    // What each index entry finds on disk. (Not `git status`: fusefat gives a name its inode
    // number of the moment it was last created under that spelling, so git's stat check passes
    // or fails on a losing entry by the timing of the writes, not by what is there.)
    assert.deepEqual(onDisk(pcWork), onDisk(gitWork), 'what the index entries find on disk');
    return { summary };
  }

  test('FILE_X / file_x and A/B vs a: detected, retried one by one, reported as git reports them', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    const src = tmpDir('collide-src');
    const files = { 'A/B': 'in A\n', FILE_X: 'upper\n', a: 'file a\n', file_x: 'lower\n' };
    for (let i = 0; i < 6; i++) files[`other-${i}`] = `other ${i}\n`;
    makeRepo(src, files);
    const { summary } = await compareWithGit(src, 'files');
    assert.deepEqual(summary.collisions, ['A/B', 'FILE_X', 'a', 'file_x']);
    // The last of each group in index order is on disk, under its own spelling.
    const pcWork = path.join(rig.mnt, 'files-pc');
    assert.deepEqual(
      fs
        .readdirSync(pcWork)
        .filter((n) => n !== '.git')
        .sort(),
      ['a', 'file_x', ...Array.from({ length: 6 }, (_, i) => `other-${i}`)],
    );
  });

  test('a symlink and a directory colliding by case', async (t) => {
    if (rig.skip) return t.skip(rig.skip);
    if (rig.symlinks !== true) {
      const reason = `FAT cannot hold symlinks (symlink() on the fusefat mount fails with ${rig.symlinks})`;
      return t.skip(reason);
    }
    const src = tmpDir('collide-link-src');
    makeRepo(src, { L: { link: 'elsewhere' }, 'l/x': 'under l\n' });
    await compareWithGit(src, 'link');
  });
});
