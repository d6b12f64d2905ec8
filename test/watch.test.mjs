// A warm engine's watch (createEngine's `watch`): between calls it tells which paths may have
// changed, and a restore or forced checkout looks only at those. Every change a user can make
// between two calls must still be seen: each test primes an engine on one twin (two calls, so
// the second leaves a record the third trusts), changes both twins the same way, restores with
// the engine and with git (checkout-index -a -f), and compares everything — and checks that
// the watch really vouched for entries (summary.watch.known), so no test passes by probing all.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, createEngine } from '../dist/index.js';
import { Repo, git } from './helpers/git.mjs';
import { editKeepingSizeAndTimes, queueSkip, withQueueLimit } from './helpers/inotify.mjs';
import {
  KEEP_FILES,
  assertSameSnapshot,
  buildSwitchRepo,
  compareTwins,
  makeTwins,
  readIndex,
  worktreeSnapshot,
} from './helpers/twin.mjs';

const abs = (dir, rel) => path.join(dir, rel);
const write = (dir, rel, text) => {
  fs.mkdirSync(path.dirname(abs(dir, rel)), { recursive: true });
  fs.writeFileSync(abs(dir, rel), text);
};
const rm = (dir, rel) => fs.rmSync(abs(dir, rel), { recursive: true, force: true });

const RESTORE = { restore: true, workers: 2, threshold: 0, racyWait: false };

/** Twins at `at`, and an engine that has restored the pc twin twice (armed, then recorded). */
async function primed(src, at = 'B', prime = [RESTORE, RESTORE]) {
  const twins = await makeTwins(src, { at });
  const engine = createEngine({ workers: 2 });
  for (const op of prime) await engine.checkout(twins.pc, op);
  return { twins, engine };
}

/** Changes both twins, then restores: the engine on one, git on the other; both compared. */
async function restoreAfter(src, mutate, { at, prime, staged = false, then } = {}) {
  const { twins, engine } = await primed(src, at, prime);
  try {
    await mutate(twins.git);
    await mutate(twins.pc);
    const { summary } = await compareTwins(twins, {
      op: { restore: true },
      run: (dir) => engine.checkout(dir, RESTORE),
    });
    assert.equal(summary.watch.active, true, 'no watch');
    if (staged) assert.equal(summary.watch.known, 0, 'a record trusted for an index git rewrote');
    else
      assert.ok(summary.watch.known > 0, 'the watch vouched for nothing: the test tests nothing');
    // And once more with nothing changed: all of it vouched for, nothing written.
    const again = await engine.checkout(twins.pc, RESTORE);
    assert.equal(again.files + again.symlinks, 0);
    assert.equal(git(twins.pc, ['diff', '--name-only']), '', 'the worktree differs from the index');
    if (then) {
      // A later change where the first one left new directories: those are watched too.
      await then(twins.pc);
      const later = await engine.checkout(twins.pc, RESTORE);
      assert.ok(later.watch.known > 0);
      assert.ok(later.files + later.symlinks > 0, 'the later change was not restored');
      assert.equal(git(twins.pc, ['diff', '--name-only']), '', 'a later change was missed');
    }
    return summary;
  } finally {
    await engine.close();
  }
}

describe('warm engine: the worktree watch', () => {
  let src;
  before(() => {
    src = buildSwitchRepo('watch');
  });

  const CASES = {
    'content edited in place, same size, times put back': (d) =>
      editKeepingSizeAndTimes(abs(d, KEEP_FILES[0])),
    'a file deleted, another truncated': (d) => {
      rm(d, KEEP_FILES[1]);
      fs.truncateSync(abs(d, KEEP_FILES[2]), 0);
    },
    'exec bits changed': (d) => {
      fs.chmodSync(abs(d, 'mode.sh'), 0o644);
      fs.chmodSync(abs(d, KEEP_FILES[3]), 0o755);
    },
    'a directory removed and made again with other content': (d) => {
      rm(d, 'f2d');
      write(d, 'f2d/inner.txt', 'not what the index holds\n');
    },
    'a directory moved away and another put in its place': (d) => {
      fs.renameSync(abs(d, 'new'), abs(d, 'moved-away'));
      write(d, 'new/p/q/r.txt', 'a stranger\n');
    },
    'a parent directory renamed, then renamed back with an edit inside': (d) => {
      fs.renameSync(abs(d, 'same'), abs(d, 'same.tmp'));
      fs.appendFileSync(abs(d, `same.tmp/${path.basename(KEEP_FILES[4])}`), 'edited\n');
      fs.renameSync(abs(d, 'same.tmp'), abs(d, 'same'));
    },
    'a tracked file renamed over another': (d) => {
      fs.renameSync(abs(d, KEEP_FILES[5]), abs(d, KEEP_FILES[6]));
    },
    'a file replaced by a symlink, a symlink by a file': (d) => {
      rm(d, 'both.sh');
      fs.symlinkSync('README.md', abs(d, 'both.sh'));
      rm(d, 'same/link');
      write(d, 'same/link', 'a file where a symlink belongs\n');
    },
    'a directory replaced by a symlink to edited copies': (d) => {
      fs.cpSync(abs(d, 'same'), abs(d, 'elsewhere'), { recursive: true, verbatimSymlinks: true });
      fs.appendFileSync(abs(d, KEEP_FILES[7].replace('same/', 'elsewhere/')), 'edited\n');
      rm(d, 'same');
      fs.symlinkSync('elsewhere', abs(d, 'same'));
    },
  };
  // Changes made on a later call inside what the first change replaced.
  const LATER = {
    'a directory removed and made again with other content': (d) =>
      fs.appendFileSync(abs(d, 'f2d/inner.txt'), 'edited later\n'),
    'a directory moved away and another put in its place': (d) =>
      fs.appendFileSync(abs(d, 'new/p/q/r.txt'), 'edited later\n'),
    'a parent directory renamed, then renamed back with an edit inside': (d) =>
      fs.appendFileSync(abs(d, KEEP_FILES[10]), 'edited later\n'),
    'a directory replaced by a symlink to edited copies': (d) =>
      fs.appendFileSync(abs(d, KEEP_FILES[11]), 'edited later\n'),
  };
  for (const [name, mutate] of Object.entries(CASES)) {
    test(name, () => restoreAfter(src, mutate, { then: LATER[name] }));
  }

  test('an index git rewrote between calls is not trusted; staged content wins', async () => {
    await restoreAfter(
      src,
      (d) => {
        fs.appendFileSync(abs(d, KEEP_FILES[8]), 'staged\n');
        git(d, ['add', KEEP_FILES[8]]);
        fs.appendFileSync(abs(d, KEEP_FILES[8]), 'then edited again\n');
      },
      { staged: true },
    );
  });

  test('directories a forced checkout made are watched from the next call on', async () => {
    // The pc twin goes to A and back to B with the engine: B's own directories (new/…, f2d/…)
    // are made by that checkout, after the watches were armed.
    const prime = [
      { ...RESTORE, restore: false, force: true, ref: 'A' },
      { ...RESTORE, restore: false, force: true, ref: 'B' },
      RESTORE,
    ];
    await restoreAfter(
      src,
      (d) => {
        fs.appendFileSync(abs(d, 'new/p/q/r.txt'), 'edited\n');
        fs.appendFileSync(abs(d, 'f2d/sub/deep.txt'), 'edited\n');
      },
      { prime },
    );
  });

  test('a forced checkout of the same commit restores through the watch', async () => {
    const { twins, engine } = await primed(src, 'B');
    try {
      const edit = (d) => fs.appendFileSync(abs(d, KEEP_FILES[9]), 'edited\n');
      edit(twins.git);
      edit(twins.pc);
      const { summary } = await compareTwins(twins, {
        op: { force: true },
        run: (dir) => engine.checkout(dir, { ...RESTORE, restore: false, force: true }),
      });
      assert.ok(summary.watch.known > 0);
      assert.equal(summary.files, 1);
    } finally {
      await engine.close();
    }
  });

  test('a switch and back: the files a switch wrote are vouched for by the next, not looked at', async () => {
    // Forced checkouts of A arm every watch and leave a record; the switch to B writes files
    // (their events are its own) and the switch back finds every entry of B vouched for: the
    // files it wrote too, below directories it made or where a directory was (and the
    // directories of the gitlinks it made, by their stat data). Nothing runs git in the
    // engine's twin between its calls (git status would rewrite the index, and the record is
    // of the index the engine wrote); it is compared with git's twin after. Then an edit after
    // a switch (same size, times put back) of a file it wrote: seen, refused as git refuses.
    const FORCE = { ...RESTORE, restore: false, force: true };
    const SWITCH = { ...RESTORE, restore: false };
    const { twins, engine } = await primed(src, 'A', [FORCE, FORCE]);
    try {
      const there = await engine.checkout(twins.pc, { ...SWITCH, ref: 'B' });
      git(twins.git, ['checkout', '-q', 'B']);
      assert.ok(there.files > 3, 'the switch wrote too little to test');
      const entriesOfB = git(twins.pc, ['ls-files']).split('\n').filter(Boolean);
      const back = await engine.checkout(twins.pc, { ...SWITCH, ref: 'A' });
      git(twins.git, ['checkout', '-q', 'A']);
      assert.equal(
        back.watch.known,
        entriesOfB.length,
        'the files the switch to B wrote were not all vouched for',
      );
      assertSameSnapshot(worktreeSnapshot(twins.pc), worktreeSnapshot(twins.git), 'worktree');
      assert.equal(readIndex(twins.pc).text, readIndex(twins.git).text, 'index');
      assert.equal(git(twins.pc, ['status', '--porcelain']), '');
      // content.txt was written by the switch back to A; B changes it.
      editKeepingSizeAndTimes(abs(twins.git, 'content.txt'));
      editKeepingSizeAndTimes(abs(twins.pc, 'content.txt'));
      await compareTwins(twins, {
        op: { ref: 'B' },
        run: (dir) => engine.checkout(dir, { ...SWITCH, ref: 'B' }),
        expect: 'ERR_WOULD_OVERWRITE',
      });
    } finally {
      await engine.close();
    }
  });

  test('a .gitattributes put where the watch knew there was none is read by the next switch', async () => {
    // The switches look for a worktree .gitattributes in every directory they write in; the
    // watch remembers where there was none. An untracked one planted after that (git reads
    // it when the index has none) must be seen: the switch writes sub/a.txt with CRLF, as git.
    const r = Repo.init('watch-attrs');
    r.write('top.txt', 'top\n');
    r.write('sub/a.txt', 'one\ntwo\n');
    r.write('sub/b.txt', 'stays\n');
    r.commit('X');
    r.branch('X');
    r.write('sub/a.txt', 'one\ntwo\nthree\n');
    r.commit('Y');
    r.branch('Y');
    const twins = await makeTwins(r.dir, { at: 'X' });
    const engine = createEngine({ workers: 2 });
    const FORCE = { ...RESTORE, restore: false, force: true };
    const SWITCH = { ...RESTORE, restore: false };
    try {
      await engine.checkout(twins.pc, FORCE);
      await engine.checkout(twins.pc, FORCE);
      for (const ref of ['Y', 'X']) {
        await engine.checkout(twins.pc, { ...SWITCH, ref });
        git(twins.git, ['checkout', '-q', ref]);
      }
      for (const d of [twins.git, twins.pc])
        write(d, 'sub/.gitattributes', '*.txt text eol=crlf\n');
      const { summary } = await compareTwins(twins, {
        op: { ref: 'Y' },
        run: (dir) => engine.checkout(dir, { ...SWITCH, ref: 'Y' }),
      });
      assert.ok(summary.watch.known > 0, 'no watch vouched: the test tests nothing');
      assert.equal(fs.readFileSync(abs(twins.pc, 'sub/a.txt'), 'utf8'), 'one\r\ntwo\r\nthree\r\n');
    } finally {
      await engine.close();
    }
  });

  // The kernel's queue holds max_queued_events per instance, read when the instance is made: a
  // low limit for the engine's instance, then more changes than it holds — among them a
  // directory moved away and replaced, whose watch then sees the wrong place.
  test(
    'a queue overflow: nothing trusted, every watch armed afresh',
    { skip: queueSkip },
    async () => {
      const { twins, engine } = await withQueueLimit(16, () => primed(src, 'B'));
      try {
        const mutate = (d) => {
          fs.renameSync(abs(d, 'new'), abs(d, 'moved-away'));
          write(d, 'new/p/q/r.txt', 'a stranger\n');
          // ~200 events in a millisecond or two: more than 16 between any two of the engine's
          // reads of its queue (every 20 ms); one file after another, so none are merged.
          for (let round = 0; round < 8; round++)
            for (const f of KEEP_FILES) fs.appendFileSync(abs(d, f), 'edited\n');
        };
        mutate(twins.git);
        mutate(twins.pc);
        const { summary } = await compareTwins(twins, {
          op: { restore: true },
          run: (dir) => engine.checkout(dir, RESTORE),
        });
        assert.equal(summary.watch.known, 0, 'trusted a record past lost events');
        // The replaced directory is watched where it is now: a later change there is seen.
        await engine.checkout(twins.pc, RESTORE);
        fs.appendFileSync(abs(twins.pc, 'new/p/q/r.txt'), 'edited later\n');
        const later = await engine.checkout(twins.pc, RESTORE);
        assert.ok(later.watch.known > 0);
        assert.equal(git(twins.pc, ['diff', '--name-only']), '', 'a later change was missed');
      } finally {
        await engine.close();
      }
    },
  );

  test('one-shot calls and `watch: false` keep no watch', async () => {
    const { twins } = await primed(src, 'B', []);
    const one = await checkout(twins.pc, RESTORE);
    assert.deepEqual(one.watch, { active: false, known: 0, settled: false, stopped: null });
    const engine = createEngine({ watch: false });
    try {
      for (let i = 0; i < 3; i++) {
        const s = await engine.checkout(twins.pc, RESTORE);
        assert.deepEqual(s.watch, { active: false, known: 0, settled: false, stopped: null });
      }
    } finally {
      await engine.close();
    }
    assert.throws(() => createEngine({ watch: 'yes' }), { code: 'ERR_INVALID_OPTION' });
  });
});
