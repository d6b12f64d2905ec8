// `restore: true`: make the worktree match the index (`git checkout-index -a -f`), compared
// with git on twin worktrees: deleted files and directories, edits, exec bits, symlinks,
// entries replaced by something of another type, staged content (which wins), unmerged entries
// (refused) and an invalid `ref`.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { buildFlatRepo, freshClone, git, gitOut } from './helpers/git.mjs';
import { editIndexStat, statWords } from './helpers/raw.mjs';
import { runCli } from './helpers/run.mjs';
import {
  KEEP_FILES,
  WORKER_MATRIX,
  buildSwitchRepo,
  compareWithGit,
  mergeConflict,
} from './helpers/twin.mjs';

const pc = (op) => (dir) => checkout(dir, { ...op, racyWait: false });

const append = (dir, rel, text) => fs.appendFileSync(path.join(dir, rel), text);
const write = (dir, rel, text) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};
const rm = (dir, rel) => fs.rmSync(path.join(dir, rel), { recursive: true, force: true });
const read = (dir, rel) => fs.readFileSync(path.join(dir, rel), 'utf8');

/** Deletions (files, a whole nested directory), edits, exec bits, symlinks, type changes. */
function damage(d) {
  rm(d, KEEP_FILES[0]);
  rm(d, 'f2d'); // f2d/inner.txt and f2d/sub/deep.txt (on B): a whole directory
  rm(d, 'new'); // new/p/q/r.txt: nested directories
  append(d, 'content.txt', 'edited\n');
  append(d, KEEP_FILES[1], 'edited\n');
  fs.truncateSync(path.join(d, KEEP_FILES[2]), 0);
  fs.chmodSync(path.join(d, 'mode.sh'), 0o644); // exec bit lost
  fs.chmodSync(path.join(d, KEEP_FILES[3]), 0o755); // exec bit gained
  rm(d, 'same/link'); // symlink deleted
  rm(d, 'link-retarget');
  fs.symlinkSync('somewhere/else', path.join(d, 'link-retarget')); // symlink retargeted
  rm(d, 'f2l');
  write(d, 'f2l', 'a file where a symlink belongs\n');
  rm(d, 'both.sh');
  fs.symlinkSync('README.md', path.join(d, 'both.sh')); // a symlink where a file belongs
  rm(d, 'deep');
  fs.mkdirSync(path.join(d, 'deep')); // an empty directory where a file belongs
  rm(d, 'l2d');
  fs.symlinkSync('same', path.join(d, 'l2d')); // a symlink where a directory belongs
  write(d, 'untracked.txt', 'untracked: kept\n');
  write(d, 'junk.ign', 'ignored: kept\n');
}

describe('restore (git checkout-index -a -f)', () => {
  let src;
  before(() => {
    src = buildSwitchRepo('restore');
  });

  for (const m of WORKER_MATRIX) {
    test(`deletions, edits, modes, symlinks, type changes; workers ${m.workers}, threshold ${m.threshold}`, async () => {
      const op = { restore: true, ...m };
      const { summary, twins } = await compareWithGit(src, {
        at: 'B',
        mutate: damage,
        op,
        run: pc(op),
      });
      assert.equal(summary.mode, 'restore');
      assert.equal(summary.deleted, 0);
      assert.equal(summary.ref, 'refs/heads/B');
      assert.equal(summary.pool.used, m.workers > 1 && m.threshold === 0, 'summary.pool.used');
      // l2d was a symlink to same/ while l2d/keep-0.txt was restored: nothing written through it.
      assert.equal(read(twins.pc, 'same/keep-0.txt'), read(twins.git, 'same/keep-0.txt'));
      assert.ok(fs.existsSync(path.join(twins.pc, 'untracked.txt')), 'untracked file deleted');
    });
  }

  test('on A: a deleted file, a directory where a symlink belongs, a deleted gitlink directory', async () => {
    const op = { restore: true, workers: 2, threshold: 0 };
    await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        rm(d, 'f2d');
        rm(d, 'l2d');
        fs.mkdirSync(path.join(d, 'l2d')); // a directory where a symlink belongs
        write(d, 'l2f', 'a file where a symlink belongs\n');
        rm(d, 'deep/a/b/c'); // nested directories
        append(d, 'only-a.txt', 'edited\n');
        rm(d, KEEP_FILES[5]);
        rm(d, 'g2d'); // a gitlink's (empty) directory
      },
      op,
      run: pc(op),
    });
  });

  test('staged content wins over the worktree and over HEAD', async () => {
    const op = { restore: true, workers: 2, threshold: 0 };
    const { twins } = await compareWithGit(src, {
      at: 'B',
      mutate: (d) => {
        append(d, KEEP_FILES[6], 'staged\n');
        write(d, 'staged-new.txt', 'new and staged\n');
        fs.chmodSync(path.join(d, 'both.sh'), 0o755);
        git(d, ['add', KEEP_FILES[6], 'staged-new.txt', 'both.sh']);
        append(d, KEEP_FILES[6], 'then edited again\n');
        rm(d, 'staged-new.txt');
        fs.chmodSync(path.join(d, 'both.sh'), 0o644);
        git(d, ['rm', '-q', '--cached', KEEP_FILES[7]]); // not in the index: left alone
        append(d, KEEP_FILES[7], 'untracked now\n');
      },
      op,
      run: pc(op),
    });
    assert.match(read(twins.pc, KEEP_FILES[6]), /staged\n$/);
    assert.equal(read(twins.pc, 'staged-new.txt'), 'new and staged\n');
    assert.notEqual(fs.statSync(path.join(twins.pc, 'both.sh')).mode & 0o100, 0);
    assert.match(read(twins.pc, KEEP_FILES[7]), /untracked now\n$/);
  });

  test('nothing to restore: nothing written', async () => {
    const op = { restore: true, workers: 2, threshold: 0 };
    const { summary } = await compareWithGit(src, { at: 'B', op, run: pc(op) });
    assert.equal(summary.files + summary.symlinks + summary.gitlinks, 0);
    assert.equal(summary.created + summary.updated + summary.deleted, 0);
    assert.equal(summary.pool.used, false);
  });

  test('a detached HEAD stays detached', async () => {
    const op = { restore: true, workers: 1, threshold: 0 };
    const { summary } = await compareWithGit(src, {
      at: 'vA',
      mutate: (d) => rm(d, 'gone'),
      op,
      run: pc(op),
    });
    assert.equal(summary.detached, true);
  });

  test('unmerged entries: ERR_UNMERGED, nothing written', async () => {
    const op = { restore: true, workers: 2, threshold: 0 };
    await compareWithGit(src, {
      at: 'c1',
      mutate: (d) => {
        mergeConflict(d);
        rm(d, KEEP_FILES[0]);
      },
      op,
      expect: 'ERR_UNMERGED',
      run: pc(op),
    });
  });

  test('ref with restore: ERR_INVALID_OPTION, nothing written', async () => {
    const op = { restore: true, ref: 'A', workers: 2, threshold: 0 };
    await compareWithGit(src, {
      at: 'B',
      mutate: (d) => rm(d, KEEP_FILES[0]),
      op,
      expect: 'ERR_INVALID_OPTION',
      run: pc(op),
    });
  });

  test('CLI: pcheckout --restore <repo>', async () => {
    const op = { restore: true };
    const run = async (d) => {
      const r = await runCli(['--restore', '--no-racy-wait', '--json', d]);
      assert.equal(r.status, 0, `pcheckout --restore failed: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    const { summary } = await compareWithGit(src, { at: 'B', mutate: damage, op, run, cli: true });
    assert.equal(summary.mode, 'restore');
  });
});

describe('restore: stat data of entries hashed clean', () => {
  // A file whose mtime moved by nanoseconds only (same second, same size, and the index told of
  // its new ctime: a touch changes the ctime to now, which may be a later second) is neither
  // dirty nor clean by its stat data: the restore hashes it, leaves it (same inode) and
  // records its fresh stat data, as git's refresh would; the whole-index restore takes it in
  // bulk.
  test('a nanosecond-only touch: kept, and the new index holds the new mtime', async () => {
    const src = buildFlatRepo(40, { prefix: 'restore-ns' });
    const dir = freshClone(src.dir);
    await checkout(dir, { racyWait: false });
    const rel = 'f/1/file-30.txt';
    const file = path.join(dir, rel);
    const before = fs.statSync(file, { bigint: true });
    const sec = before.mtimeNs / 1_000_000_000n;
    const nsec = (before.mtimeNs % 1_000_000_000n) ^ 0x5a5a5n; // another nanosecond, same second
    const when = Number(sec) + Number(nsec) / 1e9;
    fs.utimesSync(file, when, when);
    const after = fs.statSync(file, { bigint: true });
    assert.equal(after.mtimeNs / 1_000_000_000n, sec, 'the touch stays in the same second');
    assert.notEqual(after.mtimeNs, before.mtimeNs);
    const [ctimeSec, ctimeNsec] = statWords(file);
    editIndexStat(dir, rel, (words) => words.splice(0, 2, ctimeSec, ctimeNsec));
    fs.rmSync(path.join(dir, 'f/0/file-3.txt')); // something to restore
    const summary = await checkout(dir, { restore: true, racyWait: false });
    assert.equal(summary.files, 1);
    assert.equal(fs.statSync(file, { bigint: true }).ino, before.ino, 'not rewritten');
    const debug = gitOut(dir, 'ls-files', '--debug', '--', rel);
    const mtime = /mtime: (\d+):(\d+)/.exec(debug);
    assert.ok(mtime, debug);
    assert.equal(BigInt(mtime[1]), sec);
    assert.equal(BigInt(mtime[2]), after.mtimeNs % 1_000_000_000n, 'the fresh nanoseconds');
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });
});
