// Sparse checkout (cone mode) with things outside the cone that the patterns do not account
// for, compared with git 2.39's `git checkout [-f] <ref>`:
// - a modified file that `git sparse-checkout set` left outside the cone ("not up to date and
//   were left despite sparse patterns": no skip-worktree bit, the file still there);
// - staged changes outside the cone, untracked files outside it, files moving into and out of
//   the cone.
// Each case runs in twins (git in one, pcheckout in the other) and compares the worktree (names,
// types, bytes), `git ls-files -s -v`, `git status --porcelain --ignored` (compareTwins), and
// per entry the flags and size of `git ls-files --debug` and whether its times are zero (never
// the times themselves, nor inodes).
//
// What git does (unpack-trees.c: the merge first, then apply_sparse_checkout on each result
// entry), checked as oracle assertions below:
// - `git checkout -f`: every entry outside the cone gets the bit and loses its file, a modified
//   one too (oneway_merge marks a modified entry for update; an entry marked for update that
//   leaves the cone is removed without a look); an entry the same in the index and the target
//   keeps its stat data;
// - a switch: an entry it keeps (the same in HEAD and the target) whose file is modified keeps
//   the file and stays without the bit (the warning again), its stat data as it was (not the
//   racy smudge: the stat data no longer matches the file); one the target changes or removes
//   is a local change that stops the switch, as anywhere;
// - a staged change outside the cone stops a switch like one inside it;
// - an untracked file where the target adds an entry outside the cone is left alone (git's
//   verify_absent does not look outside the cone), the entry gets the bit.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { Repo, git, gitTry } from './helpers/git.mjs';
import { indexListing } from './helpers/compare.mjs';
import { compareTwins, makeTwins } from './helpers/twin.mjs';

const append = (dir, rel, text = 'local\n') => fs.appendFileSync(path.join(dir, rel), text);
const LEFT = /not up to date and were left despite sparse patterns/;

/**
 * Branches A and B (main is B), the cone is in/ (and the top-level files):
 *   in cone:  top.txt, in/a.txt (changes), in/mv.txt (A; out/mv.txt on B: leaves the cone),
 *             in/come.txt (B; out/come.txt on A: enters the cone)
 *   outside:  out/same.txt, out/deep/y.txt, out/link (the same on A and B), out/x.txt
 *             (changes), out/gone.txt (A only), out/new.txt and out/nest/n.txt (B only)
 */
function buildRepo() {
  const r = Repo.init('outside-cone');
  r.write('top.txt', 'top\n');
  r.write('in/a.txt', 'a on A\n');
  r.write('in/mv.txt', 'leaves the cone on B\n');
  r.write('out/come.txt', 'enters the cone on B\n');
  r.write('out/same.txt', 'the same on A and B\n');
  r.write('out/deep/y.txt', 'y\n');
  r.symlink('out/link', 'same.txt');
  r.write('out/x.txt', 'x on A\n');
  r.write('out/gone.txt', 'A only\n');
  r.branch('A', r.commit('A'));
  r.write('in/a.txt', 'a on B\n');
  r.rm('in/mv.txt');
  r.write('out/mv.txt', 'leaves the cone on B\n');
  r.rm('out/come.txt');
  r.write('in/come.txt', 'enters the cone on B\n');
  r.write('out/x.txt', 'x on B\n');
  r.rm('out/gone.txt');
  r.write('out/new.txt', 'B only\n');
  r.write('out/nest/n.txt', 'B only, in a new directory\n');
  r.branch('B', r.commit('B'));
  r.git('reset', '-q', '--hard', 'B');
  r.gc();
  return r;
}

/** `git sparse-checkout set --cone <dirs>`; returns its stderr (the "left" warning). */
function sparseSet(dir, dirs = ['in']) {
  const res = gitTry(dir, ['sparse-checkout', 'set', '--cone', ...dirs]);
  assert.equal(res.status, 0, res.stderr);
  return res.stderr;
}

/** The index file's bits (see readIndex): git clears those of present files as it reads. */
const RAW = ['-c', 'sparse.expectFilesOutsideOfPatterns=true'];

/**
 * `ls-files --debug` per entry: flags, size, and whether ctime and mtime are zero (`listing`:
 * indexListing's, with RAW).
 */
function debugFlags(listing) {
  return listing.entries.map((e) => {
    const zeroTimes =
      e.ctimeSec === 0 && e.ctimeNsec === 0 && e.mtimeSec === 0 && e.mtimeNsec === 0;
    return `${e.name} flags ${e.flags} size ${e.size}${zeroTimes ? ' zero times' : ''}`;
  });
}

/** readIndex's entries (tags as the index file has them) from indexListing's with RAW. */
function entriesOf(listing) {
  const entries = new Map();
  for (const { name, tag, mode, oid, stage } of listing.entries) {
    entries.set(name, [...(entries.get(name) ?? []), { tag, mode, oid, stage }]);
  }
  return entries;
}

/**
 * Twins at `at`: `before(dir)` on the full checkout, then `git sparse-checkout set` (`set(dir)`,
 * by default sparseSet; its warning checked against `left`), then `after(dir)`; then git's
 * checkout vs pcheckout.
 */
async function compareOutside(src, { at, before: pre, set, left = false, after, op, expect }) {
  const twins = await makeTwins(src, {
    at,
    mutate: async (d) => {
      await pre?.(d);
      const warned = (set ?? sparseSet)(d);
      assert.equal(LEFT.test(warned), left, `oracle: sparse-checkout set said: ${warned}`);
      await after?.(d);
    },
  });
  const seen = {};
  const result = await compareTwins(twins, { op, run: runAndLook(twins, op, seen), expect });
  if (!result.error) assert.deepEqual(seen.flags.pc, seen.flags.git, 'ls-files --debug');
  return { ...result, tags: seen.tags };
}

/**
 * The pcheckout call for compareTwins, which runs git status last, and status rewrites the
 * index (and its bits: see readIndex). So the index files are read right after the checkout
 * (git's ran before): `seen.flags` (debugFlags of both twins) and `seen.tags` (git's entries).
 */
function runAndLook(twins, op, seen) {
  return async (dir) => {
    const summary = await checkout(dir, { ...op, racyWait: false });
    const gitListing = indexListing(twins.git, { config: RAW });
    seen.flags = {
      pc: debugFlags(indexListing(twins.pc, { config: RAW })),
      git: debugFlags(gitListing),
    };
    seen.tags = entriesOf(gitListing);
    return summary;
  };
}

/** git's skip-worktree tag of an entry right after its checkout (compareOutside's `tags`). */
const tagOf = (tags, p) => tags.get(p)?.[0]?.tag;
const exists = (dir, p) => fs.existsSync(path.join(dir, p));

describe('sparse checkout: what lies outside the cone', () => {
  let src;
  before(() => {
    src = buildRepo();
  });

  const leaveModified = (d) => {
    append(d, 'out/same.txt');
    append(d, 'out/deep/y.txt');
  };

  for (const ref of [undefined, 'A', 'B']) {
    test(`git checkout -f ${ref ?? '(HEAD)'}: modified files left outside the cone removed, the bit set`, async () => {
      const op = { ref, force: true, workers: 2, threshold: 0 };
      const { twins, tags } = await compareOutside(src, {
        at: 'B',
        before: (d) => {
          leaveModified(d);
          append(d, 'out/x.txt');
        },
        left: true,
        op,
      });
      for (const p of ['out/same.txt', 'out/deep/y.txt', 'out/x.txt']) {
        assert.equal(tagOf(tags, p), 'S', `oracle: ${p} skip-worktree`);
        assert.ok(!exists(twins.git, p), `oracle: ${p} removed`);
      }
      assert.ok(!exists(twins.git, 'out'), 'oracle: out/ removed');
    });
  }

  test('git checkout -f B from A: modified files that B changes or removes go too', async () => {
    const op = { ref: 'B', force: true, workers: 1, threshold: 1e9 };
    const { tags } = await compareOutside(src, {
      at: 'A',
      before: (d) => {
        leaveModified(d);
        append(d, 'out/x.txt');
        append(d, 'out/gone.txt');
        fs.rmSync(path.join(d, 'out/link'));
        fs.symlinkSync('elsewhere', path.join(d, 'out/link'));
      },
      left: true,
      op,
    });
    assert.equal(tagOf(tags, 'out/link'), 'S', 'oracle: the retargeted link sparsified');
  });

  for (const [from, to] of [
    ['A', 'B'],
    ['B', 'A'],
  ]) {
    test(`switch ${from} → ${to}: a modified file left outside the cone stays, no bit, its stat data kept`, async () => {
      const op = { ref: to, workers: 2, threshold: 0 };
      const {
        twins,
        tags,
        git: g,
      } = await compareOutside(src, {
        at: from,
        before: leaveModified,
        left: true,
        op,
      });
      assert.match(g.stderr, LEFT, 'oracle: git warns again');
      assert.equal(tagOf(tags, 'out/same.txt'), 'H', 'oracle: no bit');
      assert.ok(exists(twins.git, 'out/same.txt'), 'oracle: the file stays');
      assert.equal(tagOf(tags, 'out/x.txt'), 'S', 'oracle: others sparsified');
    });
  }

  test('switch refused: a modified file left outside the cone that the target changes or removes', async () => {
    for (const [rel, to] of [
      ['out/x.txt', 'B'],
      ['out/gone.txt', 'B'],
      ['out/mv.txt', 'A'],
    ]) {
      const op = { ref: to, workers: 2, threshold: 0 };
      const at = to === 'A' ? 'B' : 'A';
      const { error } = await compareOutside(src, {
        at,
        before: (d) => append(d, rel),
        left: true,
        op,
        expect: 'ERR_WOULD_OVERWRITE',
      });
      assert.deepEqual(error.paths, [rel]);
    }
  });

  test('staged changes outside the cone to an entry the switch keeps: carried, -f discards them', async () => {
    // Staged, then modified again: `sparse-checkout set` leaves it; a switch keeps it as it is.
    const stageAndLeave = (d) => {
      append(d, 'out/same.txt', 'staged\n');
      git(d, ['add', 'out/same.txt']);
      append(d, 'out/same.txt');
    };
    for (const force of [false, true]) {
      const { tags } = await compareOutside(src, {
        at: 'A',
        before: stageAndLeave,
        left: true,
        op: { ref: 'B', force, workers: 2, threshold: 0 },
      });
      assert.equal(tagOf(tags, 'out/same.txt'), force ? 'S' : 'H', 'oracle');
    }
    // Staged and clean: sparsified by `set` with its staged content; a switch carries it.
    const stageClean = (d) => {
      append(d, 'out/same.txt', 'staged\n');
      git(d, ['add', 'out/same.txt']);
    };
    for (const force of [false, true]) {
      const { tags } = await compareOutside(src, {
        at: 'A',
        before: stageClean,
        op: { ref: 'B', force, workers: 2, threshold: 0 },
      });
      assert.equal(tagOf(tags, 'out/same.txt'), 'S', 'oracle: skip-worktree');
    }
  });

  test('a staged change to an entry that changes outside the cone: refused, -f discards it', async () => {
    const stage = (d) => {
      append(d, 'out/x.txt', 'staged\n');
      git(d, ['add', 'out/x.txt']);
    };
    const { error } = await compareOutside(src, {
      at: 'A',
      before: stage,
      op: { ref: 'B', workers: 2, threshold: 0 },
      expect: 'ERR_WOULD_OVERWRITE',
    });
    assert.deepEqual(error.paths, ['out/x.txt']);
    await compareOutside(src, {
      at: 'A',
      before: stage,
      op: { ref: 'B', force: true, workers: 2, threshold: 0 },
    });
  });

  for (const force of [false, true]) {
    test(`untracked files outside the cone, some where the target adds entries${force ? ' (-f)' : ''}`, async () => {
      const op = { ref: 'B', force, workers: 2, threshold: 0 };
      const { twins, tags } = await compareOutside(src, {
        at: 'A',
        after: (d) => {
          fs.mkdirSync(path.join(d, 'out/far'), { recursive: true });
          fs.writeFileSync(path.join(d, 'out/far/u.txt'), 'untracked\n');
          fs.writeFileSync(path.join(d, 'out/new.txt'), 'untracked, B adds it\n');
          fs.writeFileSync(path.join(d, 'out/mv.txt'), 'untracked, B moves in/mv.txt here\n');
          fs.writeFileSync(path.join(d, 'out/u.log'), 'untracked\n');
          fs.writeFileSync(path.join(d, 'out/nest'), 'untracked, where B has a directory\n');
        },
        op,
      });
      assert.equal(tagOf(tags, 'out/new.txt'), 'S', 'oracle: the new entry skip-worktree');
      assert.equal(
        fs.readFileSync(path.join(twins.git, 'out/new.txt'), 'utf8'),
        'untracked, B adds it\n',
        'oracle: the untracked file left alone',
      );
    });
  }

  test('moves into and out of the cone with modified files left outside: A → B → A', async () => {
    const twins = await makeTwins(src, {
      at: 'A',
      mutate: (d) => {
        append(d, 'out/same.txt');
        sparseSet(d);
      },
    });
    for (const to of ['B', 'A']) {
      const op = { ref: to, workers: 2, threshold: 0 };
      await compareTwins(twins, { op, run: (dir) => checkout(dir, { ...op, racyWait: false }) });
      assert.deepEqual(
        debugFlags(indexListing(twins.pc, { config: RAW })),
        debugFlags(indexListing(twins.git, { config: RAW })),
        `ls-files --debug (${to})`,
      );
    }
    assert.ok(exists(twins.git, 'out/come.txt') === false, 'oracle: left the cone');
    assert.ok(exists(twins.git, 'in/mv.txt'), 'oracle: back in the cone');
  });

  test('an untracked file where an entry outside the cone was, staged as removed: refused, -f removes it', async () => {
    // A's out/gone.txt removed from the index (B lacks it too), an untracked file there:
    // git's verify_absent looks at it though it is outside the cone.
    const after = (d) => {
      git(d, ['rm', '-q', '--cached', '--sparse', 'out/gone.txt']);
      fs.mkdirSync(path.join(d, 'out'));
      fs.writeFileSync(path.join(d, 'out/gone.txt'), 'untracked where A had a file\n');
      fs.writeFileSync(path.join(d, 'out/new.txt'), 'untracked, B adds it\n');
    };
    const { error } = await compareOutside(src, {
      at: 'A',
      after,
      op: { ref: 'B', workers: 2, threshold: 0 },
      expect: 'ERR_WOULD_OVERWRITE',
    });
    assert.deepEqual(error.paths, ['out/gone.txt']);
    await compareOutside(src, { at: 'A', after, op: { ref: 'B', force: true, workers: 1 } });
  });

  // Non-cone mode (core.sparseCheckoutCone off): gitignore-style patterns, the last match
  // deciding, a path no pattern matches taking its nearest decided directory's decision.
  const NON_CONE = [
    ['*.txt', '!/out/deep/', '/in/'],
    ['/*', '!/*/', '/out/', '!/out/x.txt', '!same.txt', 'deep/'],
    ['/in/*.txt', 'out/*', '!/out/n*/'],
    ['/out/?.txt', '!/in/', 'link'],
  ];
  const nonConeSet = (patterns) => (d) => {
    const res = gitTry(d, ['sparse-checkout', 'set', '--no-cone', ...patterns]);
    assert.equal(res.status, 0, res.stderr);
    return res.stderr;
  };
  for (const [k, patterns] of NON_CONE.entries()) {
    test(`non-cone patterns ${JSON.stringify(patterns)}: switch A → B, -f B → A, as git`, async () => {
      for (const [from, to, force] of [
        ['A', 'B', false],
        ['B', 'A', true],
      ]) {
        const twins = await makeTwins(src, { at: from, mutate: nonConeSet(patterns) });
        const op = { ref: to, force, workers: 2, threshold: k % 2 === 0 ? 0 : 1e9 };
        const seen = {};
        await compareTwins(twins, { op, run: runAndLook(twins, op, seen) });
        assert.deepEqual(seen.flags.pc, seen.flags.git, `ls-files --debug (${from} → ${to})`);
      }
    });
  }

  test('non-cone patterns written by hand, then a switch: git applies them, so does pcheckout', async () => {
    for (const [k, patterns] of NON_CONE.entries()) {
      const twins = await makeTwins(src, {
        at: 'A',
        mutate: (d) => {
          append(d, 'out/same.txt'); // modified: left by a narrowing
          nonConeSet(['/*'])(d);
          const file = path.join(d, '.git', 'info', 'sparse-checkout');
          fs.writeFileSync(file, `# by hand\n${patterns.join('\n')}\n`);
        },
      });
      const op = { ref: 'B', workers: 1, threshold: 0 };
      const seen = {};
      await compareTwins(twins, { op, run: runAndLook(twins, op, seen) });
      assert.deepEqual(seen.flags.pc, seen.flags.git, `ls-files --debug (patterns ${k})`);
      const tags = [...seen.tags.values()].map((l) => l[0].tag);
      assert.ok(tags.includes('S') && tags.includes('H'), `oracle: patterns ${k} select some`);
    }
  });

  test('non-cone patterns: a modified file left outside them, -f and a switch', async () => {
    for (const force of [false, true]) {
      const { tags } = await compareOutside(src, {
        at: 'A',
        before: (d) => append(d, 'out/same.txt'),
        set: nonConeSet(['/in/', '/*.txt']),
        left: true,
        op: { ref: 'B', force, workers: 2, threshold: 0 },
      });
      assert.equal(tagOf(tags, 'out/same.txt'), force ? 'S' : 'H', 'oracle');
    }
  });
});

// A cone-mode pattern file edited by hand: git 2.39 takes the cone lines in any order ("/*"
// without "!/*/" after it takes every directory; top-level files are always in), and a line
// that is no cone pattern makes it warn ("unrecognized pattern", "disabling cone pattern
// matching") and read the whole file as non-cone patterns.
describe('sparse checkout: a cone-mode file edited by hand', () => {
  let src;
  before(() => {
    src = buildRepo();
  });
  const files = [
    ['/in/ alone', '/in/\n', false],
    ['/* alone', '/*\n', false],
    ['/* and /in/, no !/*/', '/*\n/in/\n', false],
    ['empty', '', false],
    ['a non-cone line', '/*\n!/*/\n/in/\n*.txt\n', true],
    ['no leading slash', 'out/\n', true],
  ];
  for (const [name, text, warns] of files) {
    for (const op of [
      { ref: 'A', workers: 1, threshold: 1e9 },
      { force: true, workers: 2, threshold: 0 },
    ]) {
      test(`${name}: ${op.force ? 'checkout -f' : 'switch to A'} as git's${warns ? ', with its warnings' : ''}`, async () => {
        const { summary, git: g } = await compareOutside(src, {
          at: 'B',
          set: (d) => {
            sparseSet(d);
            fs.writeFileSync(path.join(d, '.git', 'info', 'sparse-checkout'), text);
            return '';
          },
          op,
        });
        assert.equal(
          /disabling cone pattern matching/.test(g.stderr),
          warns,
          `oracle: ${g.stderr}`,
        );
        assert.equal(summary.warnings.includes('disabling cone pattern matching'), warns);
      });
    }
  }
});
