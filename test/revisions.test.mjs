// Revision syntax as git users type it, each form checked out by git and by pcheckout in twin
// copies of one repository (HEAD, its reflog line, refs, index and status must agree), and
// resolved against `git rev-parse`; forms pcheckout does not handle say so (ERR_UNSUPPORTED).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { Repo, git, gitOut, gitTry } from './helpers/git.mjs';
import { assertSameCheckout, twins } from './helpers/rules.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';

/**
 * main: c1 → c2 → m (merge of feature: f1 "fix: parser") → c4 "docs"; tags v1 (annotated, c1),
 * vtree (annotated, of c2's tree), vv (annotated tag of v1). HEAD's reflog: main → feature →
 * main → v1 (detached) → main, so @{-1} is v1's commit, @{-2} main, @{-3} feature.
 */
function buildHistory() {
  const r = Repo.init('revs');
  r.write('a.txt', 'one\n').write('dir/b.txt', 'b\n');
  const c1 = r.commit('c1: start');
  r.tag('v1', c1, { annotated: true, message: 'version 1' });
  r.write('a.txt', 'two\n');
  const c2 = r.commit('c2: second');
  r.branch('feature');
  r.switchTo('feature');
  r.write('feature.txt', 'f\n');
  const f1 = r.commit('fix: parser\n\nA longer body mentioning zebra.');
  r.switchTo('main');
  r.write('c3.txt', 'c3\n');
  r.commit('c3: third');
  git(r.dir, ['merge', '-q', '--no-ff', '-m', 'merge feature', 'feature']);
  r.write('README', 'docs\n');
  const c4 = r.commit('c4: docs');
  const tree = r.rev(`${c2}^{tree}`);
  git(r.dir, ['tag', '-a', '-m', 'a tree', 'vtree', tree]);
  git(r.dir, ['tag', '-a', '-m', 'tag of a tag', 'vv', 'v1']);
  r.switchTo('v1');
  r.switchTo('main');
  // Fewer files to copy for each pair of twins: objects packed, no sample hooks.
  git(r.dir, ['repack', '-adq']); // not gc: it would expire these (2023-dated) reflogs
  fs.rmSync(path.join(r.gitDir, 'hooks'), { recursive: true, force: true });
  return { repo: r, c1, c2, f1, c4 };
}

describe('revisions', () => {
  let fx;
  before(() => {
    fx = buildHistory();
  });

  // Each is checked out by `git checkout <rev>` and by pcheckout in twins.
  const forms = [
    ['-', 'the previous checkout (a detached commit here)'],
    ['@{-1}', 'the same as -'],
    ['@{-2}', 'the branch checked out two switches ago (the current one)'],
    ['@{-3}', 'three switches ago: another branch, HEAD becomes symbolic to it'],
    ['@', 'HEAD, detached as git detaches it'],
    ['@~1', '@ with a suffix'],
    ['main@{1}', "the branch's previous value"],
    ['HEAD@{2}', "HEAD's reflog"],
    ['@{1}', "the current branch's reflog"],
    ['main~1^2', 'second parent of a merge'],
    ['main^^2~1', 'suffixes combined'],
    ['main^{/fix: }', 'youngest ancestor whose message matches'],
    ['main^{/zebra}', 'a match in the body'],
    [':/^c3', 'youngest commit reachable from any ref whose message matches'],
    [':/!-docs', 'youngest commit whose message does not match'],
    ['v1^{}', 'a tag peeled'],
    ['vv^{}', 'a tag of a tag peeled'],
    ['v1^{commit}', 'peeled to the commit'],
    ['v1^{object}', 'the tag object itself (detached at its commit)'],
    ['v1^{tag}', 'the tag object, required to be a tag'],
    ['@{-2}~1', 'a previous branch with a suffix: detached'],
  ];
  for (const [rev, label] of forms) {
    test(`${rev}: ${label}`, async () => {
      const { gitDir, ourDir } = twins(fx.repo.dir, 'rev');
      const peel = rev.startsWith(':/') ? '' : '^{commit}';
      const expected = gitTry(gitDir, ['rev-parse', '--verify', '-q', `${rev}${peel}`]);
      const g = gitTry(gitDir, ['checkout', '-q', rev]);
      assert.equal(g.status, 0, `git checkout ${rev}: ${g.stderr}`);
      const summary = await checkout(ourDir, { ref: rev, racyWait: false });
      if (!rev.startsWith('-') && !rev.startsWith('@{-')) {
        assert.equal(summary.commit, expected.stdout.trim(), `git rev-parse ${rev}`);
      }
      assertSameCheckout(ourDir, gitDir, `checkout ${rev}`);
    });
  }

  test('`-` twice comes back, HEAD symbolic again, as git', async () => {
    const { gitDir, ourDir } = twins(fx.repo.dir, 'rev-back');
    for (const rev of ['feature', '-', '-']) {
      git(gitDir, ['checkout', '-q', rev]);
      await checkout(ourDir, { ref: rev, racyWait: false });
      assertSameCheckout(ourDir, gitDir, `after checkout ${rev}`);
    }
    assert.equal(gitOut(ourDir, 'symbolic-ref', 'HEAD'), 'refs/heads/feature');
  });

  test('forms pcheckout does not handle: ERR_UNSUPPORTED saying so, nothing touched', async () => {
    const { ourDir } = twins(fx.repo.dir, 'rev-unsup');
    const before = targetState(ourDir);
    for (const [rev, why] of [
      ['main:a.txt', 'the <rev>:<path> syntax'],
      ['main:dir', 'the <rev>:<path> syntax'],
      [':0:a.txt', 'the <rev>:<path> syntax'],
      ['main@{upstream}', '@{upstream}'],
      ['main@{u}', '@{u}'],
      ['main@{yesterday}', 'a reflog by date'],
      ['main^!', 'a revision range'],
      [':/!x', "':/!' modifier"],
    ]) {
      const err = await assertRejectsWith(
        PcheckoutError,
        () => checkout(ourDir, { ref: rev, racyWait: false }),
        'ERR_UNSUPPORTED',
      );
      assert.match(err.message, /is not supported/, rev);
      assert.ok(err.message.includes(why), `${rev}: ${err.message}`);
      assert.deepEqual(targetState(ourDir), before, rev);
    }
  });

  test('forms git refuses: pcheckout refuses them too (ERR_BAD_REF), nothing touched', async () => {
    const { gitDir, ourDir } = twins(fx.repo.dir, 'rev-bad');
    const before = targetState(ourDir);
    for (const rev of [
      '@{-9}',
      'main@{99}',
      'main^{/no such message}',
      'main^3',
      'v1^{tree}^{tag}',
    ]) {
      assert.notEqual(gitTry(gitDir, ['checkout', '-q', rev]).status, 0, `git accepted ${rev}`);
      await assertRejectsWith(
        PcheckoutError,
        () => checkout(ourDir, { ref: rev, racyWait: false }),
        'ERR_BAD_REF',
      );
      assert.deepEqual(targetState(ourDir), before, rev);
    }
  });
});
