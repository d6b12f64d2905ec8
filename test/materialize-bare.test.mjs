// A materialize from a bare repository (a build system's mirror): it needs no worktree of the
// repository's, so it is not refused; the files are git's (compared with git's own checkout of
// the same commit into a separate work tree, `git --git-dir=<bare> --work-tree=<dir>`), and the
// mirror is left as it was. A plain checkout of a bare repository is still refused, as git's is.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { checkout, materialize, PcheckoutError } from '../dist/index.js';
import { snapshotTree } from './helpers/compare.mjs';
import { buildRichRepo, git, tmpDir, tmpPath } from './helpers/git.mjs';

const contents = (dir) => {
  const out = {};
  for (const [rel, st] of snapshotTree(dir)) {
    out[rel] =
      st.type === 'file'
        ? { ...st, bytes: fs.readFileSync(path.join(dir, rel)).toString('base64') }
        : st;
  }
  return out;
};

test('materialize from a bare repository matches git, and leaves the mirror alone', async () => {
  const src = buildRichRepo({ smallFiles: 60, prefix: 'mat-bare' });
  const bare = tmpPath('mat-bare-mirror');
  git(src.dir, ['clone', '-q', '--bare', src.dir, bare]);
  const refsBefore = git(bare, ['for-each-ref']);
  const headBefore = fs.readFileSync(path.join(bare, 'HEAD'), 'utf8');
  const target = tmpPath('mat-bare-target');
  const s = await materialize(bare, target, { racyWait: false });
  assert.equal(s.mode, 'materialize');
  // git's own: the same commit into a separate work tree.
  const oracle = tmpDir('mat-bare-oracle');
  const idx = path.join(tmpDir('mat-bare-idx'), 'index');
  git(bare, ['--work-tree', oracle, 'checkout', '-f', 'HEAD', '--', '.'], {
    env: { GIT_INDEX_FILE: idx },
  });
  assert.deepEqual(contents(target), contents(oracle));
  assert.equal(git(bare, ['for-each-ref']), refsBefore);
  assert.equal(fs.readFileSync(path.join(bare, 'HEAD'), 'utf8'), headBefore);
  assert.ok(!fs.existsSync(path.join(bare, 'index')), 'an index was written into the mirror');
  // A second call writes only what changed (nothing).
  const again = await materialize(bare, target, { racyWait: false });
  assert.equal(again.files, 0);
  await assert.rejects(
    checkout(bare, { racyWait: false }),
    (err) => err instanceof PcheckoutError && err.code === 'ERR_NOT_A_REPOSITORY',
  );
});
