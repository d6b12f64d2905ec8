// The planner's decisions on their own (src/plan: twoway.ts, oneway.ts, checkout-paths.ts,
// restore.ts, filters.ts), imported from tsc's per-module output as other tests import theirs:
// git's two-way merge table of git-read-tree(1) ("Two Tree Merge") checked case by case over
// every combination of index, HEAD and target, the one-way merge of a forced checkout, the
// overlay of a checkout of paths, the restore, and the sparse and pathspec filters. Then each
// case of the two-way table reached through a real repository, pcheckout against git.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { overlayMerge } from '../dist/plan/checkout-paths.js';
import {
  pathspecScope,
  sparseForKept,
  sparseForUpdated,
  worktreeScope,
} from '../dist/plan/filters.js';
import { oneWayMerge } from '../dist/plan/oneway.js';
import { restoreEntry } from '../dist/plan/restore.js';
import { SAME_HM, SAME_IH, SAME_IM } from '../dist/plan/rows.js';
import { twoWayLooks, twoWayMerge } from '../dist/plan/twoway.js';
import { Repo, git } from './helpers/git.mjs';
import { compareWithGit } from './helpers/twin.mjs';

// git-read-tree(1), "Two Tree Merge", as printed there: case, whether I (the index), H and M
// have the path, then "clean" (index and worktree coincide), I==H, I==M, H==M (null: N/A) and
// the result. Case 3's "use M if initial checkout" is below (initial: no index at all).
const N = null;
// prettier-ignore
const TABLE = [
  // case I  H  M   clean  I==H   I==M   H==M   result
  [1,     0, 0, 1,  N,     N,     N,     N,     'use M'],
  [2,     0, 1, 0,  N,     N,     N,     N,     'remove'],
  [3,     0, 1, 1,  N,     N,     N,     true,  'keep'],
  [3,     0, 1, 1,  N,     N,     N,     false, 'fail'],
  [4,     1, 0, 0,  true,  N,     N,     N,     'keep'],
  [5,     1, 0, 0,  false, N,     N,     N,     'keep'],
  [6,     1, 0, 1,  true,  N,     true,  N,     'keep'],
  [7,     1, 0, 1,  false, N,     true,  N,     'keep'],
  [8,     1, 0, 1,  true,  N,     false, N,     'fail'],
  [9,     1, 0, 1,  false, N,     false, N,     'fail'],
  [10,    1, 1, 0,  true,  true,  N,     N,     'remove'],
  [11,    1, 1, 0,  false, true,  N,     N,     'fail'],
  [12,    1, 1, 0,  true,  false, N,     N,     'fail'],
  [13,    1, 1, 0,  false, false, N,     N,     'fail'],
  [14,    1, 1, 1,  true,  N,     N,     true,  'keep'],
  [15,    1, 1, 1,  false, N,     N,     true,  'keep'],
  [16,    1, 1, 1,  true,  false, false, false, 'fail'],
  [17,    1, 1, 1,  false, false, false, false, 'fail'],
  [18,    1, 1, 1,  true,  false, true,  false, 'keep'],
  [19,    1, 1, 1,  false, false, true,  false, 'keep'],
  [20,    1, 1, 1,  true,  true,  false, false, 'use M'],
  [21,    1, 1, 1,  false, true,  false, false, 'fail'],
];

/**
 * Every way a path can stand: each of I, H, M absent (null) or one of three contents, and the
 * worktree clean or not. Sameness follows from the contents, so only consistent combinations.
 */
function* combinations() {
  const sides = [null, 'a', 'b', 'c'];
  for (const I of sides)
    for (const H of sides)
      for (const M of sides) {
        if (I === null && H === null && M === null) continue;
        for (const clean of [true, false]) yield { I, H, M, clean };
      }
}

const same = (x, y) => x !== null && y !== null && x === y;
const bits = ({ I, H, M }) =>
  (same(I, H) ? SAME_IH : 0) | (same(I, M) ? SAME_IM : 0) | (same(H, M) ? SAME_HM : 0);

/** The table's row for a combination (exactly one must match). */
function tableRow(c) {
  const want = (v, actual) => v === null || v === actual;
  const rows = TABLE.filter(
    ([, I, H, M, clean, ih, im, hm]) =>
      I === +(c.I !== null) &&
      H === +(c.H !== null) &&
      M === +(c.M !== null) &&
      (c.I === null || want(clean, c.clean)) &&
      want(ih, same(c.I, c.H)) &&
      want(im, same(c.I, c.M)) &&
      want(hm, same(c.H, c.M)),
  );
  assert.equal(rows.length, 1, `table rows for ${JSON.stringify(c)}: ${rows.map((r) => r[0])}`);
  return { case: rows[0][0], result: rows[0][8] };
}

const merge = (c, initial = false) =>
  twoWayMerge(c.I !== null, c.H !== null, c.M !== null, bits(c), c.clean, initial);

describe("git's two-way merge (git-read-tree(1), Two Tree Merge)", () => {
  test('every combination of index, HEAD and target decides as the table says', () => {
    const reached = new Set();
    for (const c of combinations()) {
      const expected = tableRow(c);
      reached.add(expected.case);
      assert.deepEqual({ ...merge(c) }, expected, JSON.stringify(c));
    }
    assert.deepEqual(
      [...reached].sort((a, b) => a - b),
      Array.from({ length: 21 }, (_, k) => k + 1),
      'every case of the table reached',
    );
  });

  test('an initial checkout (no index) takes M where the index lacks a path HEAD has', () => {
    // git's twoway_merge: `if (oldtree && !o->initial_checkout)` guards case 3's keep and fail.
    for (const c of combinations()) {
      if (c.I !== null) continue;
      const expected = c.H !== null && c.M !== null ? { case: 3, result: 'use M' } : tableRow(c);
      assert.deepEqual({ ...merge(c, true) }, expected, JSON.stringify(c));
    }
  });

  test('the worktree is looked at exactly where the table needs it', () => {
    for (const c of combinations()) {
      for (const initial of c.I === null ? [false, true] : [false]) {
        const { case: n, result } = merge(c, initial);
        // With an index entry: where "clean" splits a case (10/11, 20/21). Without: where the
        // path is added or removed (git's verify_absent looks for an untracked file there).
        const expected =
          c.I !== null ? [10, 11, 20, 21].includes(n) : result === 'use M' || result === 'remove';
        const looks = twoWayLooks(c.I !== null, c.H !== null, c.M !== null, bits(c), initial);
        assert.equal(looks, expected, `case ${n}, ${JSON.stringify({ ...c, initial })}`);
      }
    }
  });

  test('the same case object for the same answer: a switch decides without allocating', () => {
    const c = { I: 'a', H: 'a', M: 'b', clean: true };
    assert.equal(merge(c), merge(c));
    assert.ok(Object.isFrozen(merge(c)));
  });
});

describe("a forced checkout's one-way merge and a checkout of paths' overlay", () => {
  // [I, M, I==M, clean, oneWayMerge, overlayMerge writing the file, overlayMerge not writing it]
  // prettier-ignore
  const CASES = [
    ['merged',   true,  true,  true,  'keep',   'keep',   'keep'],
    ['merged',   true,  true,  false, 'use M',  'use M',  'keep'],
    ['merged',   true,  false, true,  'use M',  'use M',  'index only'],
    ['merged',   true,  false, false, 'use M',  'use M',  'index only'],
    ['unmerged', true,  false, true,  'use M',  'use M',  'index only'],
    ['unmerged', true,  true,  true,  'use M',  'use M',  'index only'],
    ['none',     true,  false, false, 'use M',  'use M',  'index only'],
    ['merged',   false, false, true,  'remove', 'keep',   'keep'],
    ['merged',   false, false, false, 'remove', 'keep',   'keep'],
    ['unmerged', false, false, false, 'remove', 'keep',   'keep'],
    ['none',     false, false, false, 'none',   'none',   'none'],
  ];
  for (const [I, M, sameIM, clean, oneWay, overlay, indexOnly] of CASES) {
    test(`I ${I}, M ${M ? 'exists' : 'nothing'}, I==M ${sameIM}, clean ${clean}`, () => {
      assert.equal(oneWayMerge(I, M, sameIM, clean), oneWay, 'oneWayMerge');
      assert.equal(overlayMerge(I, M, sameIM, clean, true), overlay, 'overlayMerge');
      // Without the target, there is no file to write or not: the second pass changes nothing.
      const skipped = M ? indexOnly : overlay;
      assert.equal(overlayMerge(I, M, sameIM, clean, false), skipped, 'overlayMerge, no file');
    });
  }

  test('a restore writes exactly the entries whose files do not match', () => {
    assert.equal(restoreEntry(true, false), 'keep');
    assert.equal(restoreEntry(false, false), 'checkout');
    assert.equal(restoreEntry(false, true), 'keep', 'skip-worktree: left alone');
    assert.equal(restoreEntry(true, true), 'keep');
  });
});

describe('the sparse and pathspec filters', () => {
  test('an entry kept by the merge: the skip-worktree bit decides its file', () => {
    // [skip-worktree before, in the cone now, up to date, what happens]
    // prettier-ignore
    const CASES = [
      [true,  true,  true,  'check out'], // back in the cone: the file comes back
      [true,  true,  false, 'check out'],
      [false, false, true,  'remove'], // leaving: a clean file goes
      [false, false, false, 'none'], // leaving, modified: it stays, unmarked
      [true,  false, true,  'none'], // stays out
      [true,  false, false, 'none'],
      [false, true,  true,  'none'], // stays in
      [false, true,  false, 'none'],
    ];
    for (const [skip, inCone, uptodate, expected] of CASES) {
      assert.equal(
        sparseForKept(skip, inCone, uptodate),
        expected,
        `${skip} ${inCone} ${uptodate}`,
      );
    }
  });

  test('an entry updated outside the cone: a modified file stays, except when forced', () => {
    assert.equal(sparseForUpdated(false, false), 'remove');
    assert.equal(sparseForUpdated(false, true), 'stay');
    assert.equal(sparseForUpdated(true, false), 'remove');
    assert.equal(sparseForUpdated(true, true), 'remove');
  });

  const names = ['a.txt', 'b.txt', 'dir/c.txt', 'dir/d.md', 'lit/star*.txt', 'lit/star1.txt'];
  const fakePathspec = (match, worktree) => {
    const calls = [];
    return {
      calls,
      matches: (p) => (calls.push(`match ${p}`), match(p)),
      assertAllMatched: () => calls.push('assertAllMatched'),
      worktreeMatcher: () => (calls.push('worktreeMatcher'), worktree),
    };
  };

  test('pathspecScope: the rows whose entry the pathspec matches, then the unmatched check', () => {
    const ps = fakePathspec((p) => p.startsWith('dir/') || p === 'a.txt');
    const from = Int32Array.from([0, 1, 2, -1, 4, 5]); // row 3 has no entry in that list
    const scoped = pathspecScope(ps, from, names.length, (r) => names[r]);
    assert.deepEqual([...scoped], [1, 0, 1, 0, 0, 0]);
    assert.equal(ps.calls.at(-1), 'assertAllMatched', 'checked once every row was matched');
    assert.ok(!ps.calls.includes('match dir/d.md'), 'a row without an entry is not matched');
    assert.deepEqual([...pathspecScope(null, from, 3, () => assert.fail())], [1, 1, 1]);
  });

  test("worktreeScope: git's second pass writes the files of the rows its matcher takes", () => {
    const ps = fakePathspec(
      () => true,
      (p) => p === 'lit/star*.txt',
    );
    const scoped = Uint8Array.from([1, 1, 0, 0, 1, 1]);
    const files = worktreeScope(ps, scoped, (r) => names[r]);
    assert.deepEqual([...files], [0, 0, 0, 0, 1, 0]);
    assert.equal(
      worktreeScope(null, scoped, () => assert.fail()),
      null,
    );
  });
});

// Each case of the table through a real switch, pcheckout against git (twin worktrees): a
// repository whose main (H) and `target` (M) branches give each kind of path, the index and
// worktree set up per case before `git checkout target` and pcheckout's switch.
describe('the two-way cases against git, through real repositories', () => {
  let src;
  before(() => {
    const r = Repo.init('twoway-cases');
    r.write('same.txt', 'same on both\n');
    r.write('changed.txt', 'H version\n');
    r.write('gone.txt', 'only on H\n');
    r.commit('H');
    git(r.dir, ['checkout', '-q', '-b', 'target']);
    r.write('changed.txt', 'M version\n');
    r.rm('gone.txt');
    r.write('added.txt', 'only on M\n');
    r.commit('M');
    git(r.dir, ['checkout', '-q', 'main']);
    src = r.dir;
  });

  const write = (dir, rel, text) => fs.writeFileSync(path.join(dir, rel), text);
  const stage = (dir, rel, text) => {
    write(dir, rel, text);
    git(dir, ['add', rel]);
  };
  // [cases, what is done to the index and worktree at H, the result]
  // prettier-ignore
  const CASES = [
    ['1, 10, 14, 20: a clean switch (added, dropped, kept and changed paths)', undefined, 'success'],
    ['1: a path new in M, an untracked file there', (d) => write(d, 'added.txt', 'mine\n'), 'ERR_WOULD_OVERWRITE'],
    ['2: a path M drops, its removal staged, its file left untracked', (d) => git(d, ['rm', '-q', '--cached', 'gone.txt']), 'ERR_WOULD_OVERWRITE'],
    ['3: a removal staged, H == M: kept removed', (d) => git(d, ['rm', '-q', '--cached', 'same.txt']), 'success'],
    ['3: a removal staged, H != M', (d) => git(d, ['rm', '-q', 'changed.txt']), 'ERR_WOULD_OVERWRITE'],
    ['4, 5: a path only the index has', (d) => stage(d, 'mine.txt', 'mine\n'), 'success'],
    ['6, 7: a path added as M has it', (d) => stage(d, 'added.txt', 'only on M\n'), 'success'],
    ['8, 9: a path added unlike M', (d) => stage(d, 'added.txt', 'not M\n'), 'ERR_WOULD_OVERWRITE'],
    ['11: a modified path M drops', (d) => write(d, 'gone.txt', 'edited\n'), 'ERR_WOULD_OVERWRITE'],
    ['12, 13: a staged change to a path M drops', (d) => stage(d, 'gone.txt', 'staged\n'), 'ERR_WOULD_OVERWRITE'],
    ['14, 15: a modified path H and M share', (d) => write(d, 'same.txt', 'edited\n'), 'success'],
    ['16, 17: a staged change to a path M changes', (d) => stage(d, 'changed.txt', 'staged\n'), 'ERR_WOULD_OVERWRITE'],
    ['18, 19: the change M makes, staged', (d) => stage(d, 'changed.txt', 'M version\n'), 'success'],
    ['21: a modified path M changes', (d) => write(d, 'changed.txt', 'edited\n'), 'ERR_WOULD_OVERWRITE'],
  ];
  const op = { ref: 'target' };
  for (const [what, mutate, expect] of CASES) {
    test(`case ${what}`, async () => {
      await compareWithGit(src, {
        at: 'main',
        mutate,
        op,
        expect,
        run: (dir) => checkout(dir, { ...op, racyWait: false }),
      });
    });
  }
});
