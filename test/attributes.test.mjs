// Content conversions are not implemented yet: a checkout that git would convert is refused
// (nothing written), while attributes that change nothing on checkout are honoured as git does.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { checkoutMatchesGit } from './helpers/compare.mjs';
import { Repo, freshClone, git } from './helpers/git.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';

function repoWith(attributes, files = { 'a.txt': 'one\ntwo\n', 'b.bin': 'x\0y\n' }) {
  const repo = Repo.init('attrs');
  repo.write('.gitattributes', attributes);
  for (const [name, content] of Object.entries(files)) repo.write(name, content);
  repo.commit('attrs');
  repo.gc();
  return repo;
}

async function assertRefused(repo, pattern, configure) {
  const target = freshClone(repo);
  configure?.(target);
  const before = targetState(target);
  const err = await assertRejectsWith(PcheckoutError, () => checkout(target), 'ERR_UNSUPPORTED');
  assert.match(err.message, pattern);
  assert.deepEqual(targetState(target), before, 'a refused checkout must not write anything');
}

describe('attributes', () => {
  test('eol=crlf is refused, nothing written', async () => {
    await assertRefused(repoWith('*.txt eol=crlf\n'), /\.gitattributes:1 sets 'eol=crlf'/);
  });

  test('ident is refused', async () => {
    await assertRefused(repoWith('# ids\n*.txt ident\n'), /\.gitattributes:2 sets 'ident'/);
  });

  test('working-tree-encoding is refused', async () => {
    const files = { 'w.u16': Buffer.from('\ufeffhello\n', 'utf16le'), 'a.txt': 'plain\n' };
    await assertRefused(
      repoWith('*.u16 working-tree-encoding=UTF-16\n', files),
      /working-tree-encoding/,
    );
  });

  test('a configured smudge filter is refused; an unconfigured one is not', async () => {
    const repo = repoWith('*.txt filter=rot13\n');
    await assertRefused(repo, /filter=rot13/, (target) =>
      git(target, ['config', 'filter.rot13.smudge', 'tr a-z n-za-m']),
    );
    // git too leaves files alone when the driver is not configured.
    await checkoutMatchesGit(checkout, repo, { workers: 2, threshold: 0 });
  });

  test('core.autocrlf=true is refused', async () => {
    await assertRefused(repoWith('*.bin -text\n'), /core\.autocrlf/, (target) =>
      git(target, ['config', 'core.autocrlf', 'true']),
    );
  });

  test('text with core.eol=crlf is refused', async () => {
    await assertRefused(repoWith('*.txt text\n'), /core\.eol=crlf/, (target) =>
      git(target, ['config', 'core.eol', 'crlf']),
    );
  });

  test('attributes that change nothing on checkout match git', async () => {
    const repo = repoWith('*.bin -text binary\n*.txt text eol=lf diff\n');
    await checkoutMatchesGit(checkout, repo, { workers: 1 });
    await checkoutMatchesGit(checkout, repo, { workers: 2, threshold: 0 });
  });
});
