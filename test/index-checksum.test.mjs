// An index damaged in a way the parse cannot see (a flipped byte in an entry's id or stat data)
// stops every kind of call with ERR_CORRUPT_INDEX before anything is written, with no lock left
// behind, and that is the error even where the damage would cause another (a blob the flipped
// id names is missing). (git compares the checksum only in fsck; pcheckout on every read.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, createEngine } from '../dist/index.js';
import { buildFlatRepo, freshClone, git, gitTry } from './helpers/git.mjs';
import { snapshotAll, snapshotDiff } from './helpers/raw.mjs';

const OPTS = { racyWait: false };

/** The offset of the first entry's id in a version 2 index, and of its mtime. */
const FIRST_ID = 12 + 40;
const FIRST_MTIME = 12 + 8;

function damage(dir, at) {
  const file = path.join(dir, '.git', 'index');
  const buf = fs.readFileSync(file);
  buf[at] ^= 0x5a;
  fs.writeFileSync(file, buf);
}

describe('a damaged index file', () => {
  let repo;
  before(() => {
    repo = buildFlatRepo(60, { prefix: 'ix-sum' });
    git(repo.dir, ['checkout', '-q', '-b', 'other']);
    repo.write('f/0/file-0.txt', 'changed on other\n');
    repo.commit('other');
    git(repo.dir, ['checkout', '-q', 'main']);
  });

  const cases = [
    ['a switch', { ref: 'other' }],
    ['a forced checkout', { force: true }],
    ['a restore', { restore: true }],
    ['a dry run', { ref: 'other', dryRun: true }],
    ['a switch on two workers', { ref: 'other', workers: 2, threshold: 0 }],
  ];
  for (const [what, opts] of cases) {
    for (const [where, at] of [
      ['an entry id', FIRST_ID],
      ['stat data', FIRST_MTIME],
    ]) {
      test(`${what} with a flipped byte in ${where}: ERR_CORRUPT_INDEX, nothing written`, async () => {
        const dir = freshClone(repo.dir, { prefix: 'ix-sum' });
        await checkout(dir, OPTS);
        // Something for a restore or a forced checkout to write.
        fs.rmSync(path.join(dir, 'f', '1', 'file-25.txt'));
        damage(dir, at);
        // git's fsck refuses it too (its other commands do not compare the checksum).
        assert.notEqual(gitTry(dir, ['fsck', '--no-dangling']).status, 0);
        const before = snapshotAll(dir);
        await assert.rejects(checkout(dir, { ...OPTS, ...opts }), (e) => {
          assert.equal(e.code, 'ERR_CORRUPT_INDEX', e.message);
          assert.match(e.message, /checksum/);
          return true;
        });
        assert.deepEqual(snapshotDiff(before, snapshotAll(dir)), []);
        assert.ok(!fs.existsSync(path.join(dir, '.git', 'index.lock')), 'the lock is left behind');
      });
    }
  }

  test('a warm engine: the index it wrote, damaged after with its times put back, is refused', async () => {
    // The engine does not hash again an index it committed itself while the file is still that
    // one (inode, size, times to the nanosecond): a write since moves its ctime.
    const dir = freshClone(repo.dir, { prefix: 'ix-sum-warm' });
    const engine = createEngine({ workers: 2 });
    try {
      await engine.checkout(dir, OPTS);
      const s = await engine.checkout(dir, { ...OPTS, ref: 'other' });
      assert.equal(s.updated, 1);
      const file = path.join(dir, '.git', 'index');
      const st = fs.statSync(file);
      damage(dir, FIRST_ID);
      fs.utimesSync(file, st.atime, st.mtime);
      await assert.rejects(engine.checkout(dir, { ...OPTS, ref: 'main' }), (e) => {
        assert.equal(e.code, 'ERR_CORRUPT_INDEX', e.message);
        assert.match(e.message, /checksum/);
        return true;
      });
    } finally {
      await engine.close();
    }
  });

  test('an intact index after a damaged one: the call goes on as ever', async () => {
    const dir = freshClone(repo.dir, { prefix: 'ix-sum-ok' });
    await checkout(dir, OPTS);
    const s = await checkout(dir, { ...OPTS, ref: 'other' });
    assert.equal(s.updated, 1);
    assert.equal(gitTry(dir, ['status', '--porcelain']).stdout, '');
  });
});
