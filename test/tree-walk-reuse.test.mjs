// A switch walks the target's tree and HEAD's, which share most subtrees: the first walk is kept
// and the second copies every subtree found at the same path with the same id. The copied walk
// must be exactly the walk made from scratch (paths, modes, ids, order), whatever moved, was
// added, removed or changed between the two — and a switch through it must equal git's.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { loadAddon } from '../dist/addon.js';
import { Repo, git, gitOut } from './helpers/git.mjs';
import { compareWithGit } from './helpers/twin.mjs';

const NTFS = 1; // protectionBits: core.protectNTFS on, core.protectHFS off

function treeOf(dir, rev) {
  return Buffer.from(gitOut(dir, 'rev-parse', `${rev}^{tree}`), 'hex');
}

function sameWalk(a, b, what) {
  assert.equal(a.count, b.count, `${what}: count`);
  assert.ok(a.paths.equals(b.paths), `${what}: paths`);
  assert.ok(a.oids.equals(b.oids), `${what}: ids`);
  assert.deepEqual([...a.modes], [...b.modes], `${what}: modes`);
}

describe('tree walks that reuse the previous walk', () => {
  let repo;
  before(() => {
    repo = Repo.init('walk-reuse');
    for (const d of ['x', 'y', 'z', 'z/deep', 'q']) {
      for (let i = 0; i < 5; i++) repo.write(`${d}/f${i}.txt`, `${d} ${i}\n`);
    }
    repo.write('a.b', 'sorts before a/\n');
    repo.write('top.txt', 'top\n');
    repo.commit('A');
    repo.branch('A');
    repo.write('y/f1.txt', 'changed\n'); // y differs
    fs.renameSync(path.join(repo.dir, 'z'), path.join(repo.dir, 'w')); // same ids, new path
    fs.cpSync(path.join(repo.dir, 'x'), path.join(repo.dir, 'n'), { recursive: true }); // x's id at n
    fs.rmSync(path.join(repo.dir, 'q'), { recursive: true }); // gone
    fs.mkdirSync(path.join(repo.dir, 'x.d'));
    repo.write('x.d/between.txt', 'x.d sorts between x and x/\n');
    repo.write('q', 'a file where a directory was\n');
    git(repo.dir, ['add', '-A']);
    repo.commit('B');
    repo.branch('B');
    repo.gc();
  });

  test('each order, against a walk from scratch', () => {
    const { Odb } = loadAddon();
    const objects = [path.join(repo.dir, '.git', 'objects')];
    for (const [first, second] of [
      ['A', 'B'],
      ['B', 'A'],
      ['A', 'A'],
    ]) {
      const fresh = new Odb(objects, 1 << 20);
      const alone = fresh.walkTree(treeOf(repo.dir, second), NTFS);
      fresh.close();
      const odb = new Odb(objects, 1 << 20);
      odb.walkTree(treeOf(repo.dir, first), NTFS, true);
      const reused = odb.walkTree(treeOf(repo.dir, second), NTFS);
      // Other protection bits: nothing is copied across them.
      const otherBits = odb.walkTree(treeOf(repo.dir, second), NTFS | 2);
      odb.releaseCache();
      const after = odb.walkTree(treeOf(repo.dir, second), NTFS);
      odb.close();
      sameWalk(reused, alone, `${second} after ${first}`);
      sameWalk(otherBits, alone, `${second} after ${first}, other protection`);
      sameWalk(after, alone, `${second} after releaseCache`);
    }
  });

  test('switches both ways equal git', async () => {
    for (const [at, ref] of [
      ['A', 'B'],
      ['B', 'A'],
    ]) {
      const op = { ref, workers: 2, threshold: 0 };
      await compareWithGit(repo, {
        at,
        op,
        run: (dir) => checkout(dir, { ...op, racyWait: false }),
      });
    }
  });
});
