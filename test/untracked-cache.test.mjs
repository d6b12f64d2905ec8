// `git status` stays right after a checkout when the index carries an untracked cache (`UNTR`,
// core.untrackedCache=true, feature.manyFiles) or fsmonitor data (`FSMN`, core.fsmonitor set to
// a protocol-2 hook: test/helpers/fsmonitor-hook.sh), with a full, sparse or split index.
// Twins: git and pcheckout each run the same checkout (fresh, switch, -f, restore) after a
// `git status` that wrote those extensions; then untracked files are planted — in a directory
// the checkout kept, one it created, one it emptied and a new one — and `git status` must list
// them, and say the same as in git's twin.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkout } from '../dist/index.js';
import { indexLayout } from './helpers/index-layout.mjs';
import { Repo, freshClone, git, tmpDir } from './helpers/git.mjs';
import { makeTwins } from './helpers/twin.mjs';

const HOOK_SCRIPT = fileURLToPath(new URL('./helpers/fsmonitor-hook.sh', import.meta.url));

/** base: d0..d3 with 8 files each and top.txt; next: d0 edited, d3/ gone, d4/ new, a file added in d1. */
function buildRepo() {
  const r = Repo.init('untracked-cache');
  for (let i = 0; i < 32; i++) r.write(`d${i % 4}/f${i}.txt`, `file ${i}\n`);
  r.write('top.txt', 'top\n');
  r.branch('base', r.commit('base'));
  r.write('d0/f0.txt', 'changed\n').write('d1/added.txt', 'added\n');
  for (let i = 3; i < 32; i += 4) r.rm(`d3/f${i}.txt`);
  r.write('d4/new.txt', 'new\n');
  r.branch('next', r.commit('next'));
  git(r.dir, ['checkout', '-q', 'base']);
  return r;
}

/** An executable hook that runs the monitor script (sh: no node start per query). */
function hookPath() {
  const file = path.join(tmpDir('fsmonitor'), 'query-fsmonitor');
  fs.writeFileSync(file, `#!/bin/sh\nexec /bin/sh '${HOOK_SCRIPT}' "$@"\n`, {
    mode: 0o755,
  });
  return file;
}

const SETUPS = {
  'untracked cache': () => [['core.untrackedCache', 'true']],
  'feature.manyFiles': () => [['feature.manyFiles', 'true']],
  'fsmonitor hook': () => [
    ['core.fsmonitor', hookPath()],
    ['core.untrackedCache', 'true'],
  ],
  'split index, untracked cache': () => [
    ['core.splitIndex', 'true'],
    ['core.untrackedCache', 'true'],
  ],
};

function configure(dir, config, { sparse = false } = {}) {
  for (const [k, v] of config) git(dir, ['config', k, v]);
  if (sparse) {
    git(dir, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
    git(dir, ['sparse-checkout', 'set', 'd0', 'd1', 'd4']);
  }
  // What writes the extensions: a status (index.version 4 with manyFiles, the split).
  git(dir, ['update-index', '--refresh', '-q']);
  git(dir, ['status', '--porcelain']);
}

const status = (dir) => git(dir, ['status', '--porcelain', '--untracked-files=all']);

function plant(dir) {
  for (const p of ['d1/planted.txt', 'd4/planted.txt', 'd3/planted.txt', 'fresh/dir/planted.txt']) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), 'untracked\n');
  }
}

const PLANTED = [
  '?? d1/planted.txt',
  '?? d3/planted.txt',
  '?? d4/planted.txt',
  '?? fresh/dir/planted.txt',
];

/** Planted files listed in both twins, and the same status in both, twice (the second from the cache). */
function assertStatusLikeGit(twins) {
  plant(twins.git);
  plant(twins.pc);
  for (let round = 0; round < 2; round++) {
    const ours = status(twins.pc);
    assert.equal(ours, status(twins.git), `git status, round ${round}`);
    const lines = ours.split('\n').filter(Boolean);
    for (const p of PLANTED) {
      assert.ok(lines.includes(p), `${p} listed (round ${round}): ${ours}`);
    }
    for (const l of lines) {
      assert.ok(PLANTED.includes(l), `unexpected status line ${l}`);
    }
  }
}

const extensionsOf = (dir) => indexLayout(dir).extensions;

for (const sparse of [false, true]) {
  describe(`git status after a checkout${sparse ? ', sparse index' : ''}`, () => {
    let src;
    before(() => {
      src = buildRepo();
    });

    for (const [name, setup] of Object.entries(SETUPS)) {
      if (sparse && name.startsWith('split')) continue; // git refuses split + sparse
      const twinsFor = async (at) => {
        const config = setup();
        const twins = await makeTwins(src, { at });
        configure(twins.git, config, { sparse });
        configure(twins.pc, config, { sparse });
        const want = name.includes('fsmonitor') ? 'FSMN' : 'UNTR';
        assert.ok(extensionsOf(twins.git).includes(want), `oracle: ${want} written by git status`);
        return twins;
      };

      test(`${name}: a switch`, async () => {
        const twins = await twinsFor('base');
        git(twins.git, ['checkout', '-q', 'next']);
        await checkout(twins.pc, { ref: 'next', racyWait: false });
        assertStatusLikeGit(twins);
        // And back, with the untracked files in place (none is in the way).
        git(twins.git, ['checkout', '-q', 'base']);
        await checkout(twins.pc, { ref: 'base', racyWait: false });
        assert.equal(status(twins.pc), status(twins.git));
      });

      test(`${name}: -f with local changes, then a restore`, async () => {
        const twins = await makeTwinsEdited(twinsFor);
        git(twins.git, ['checkout', '-q', '-f', 'next']);
        await checkout(twins.pc, { ref: 'next', force: true, racyWait: false });
        assertStatusLikeGit(twins);

        for (const d of [twins.git, twins.pc]) {
          fs.rmSync(path.join(d, 'd1/f1.txt'));
          fs.writeFileSync(path.join(d, 'd0/f4.txt'), 'local again\n');
        }
        git(twins.git, ['checkout-index', '-a', '-f']);
        await checkout(twins.pc, { restore: true, racyWait: false });
        assert.equal(status(twins.pc), status(twins.git));
        fs.writeFileSync(path.join(twins.git, 'd1/later.txt'), 'x');
        fs.writeFileSync(path.join(twins.pc, 'd1/later.txt'), 'x');
        const ours = status(twins.pc);
        assert.equal(ours, status(twins.git));
        assert.match(ours, /^\?\? d1\/later\.txt$/m);
      });

      if (!sparse) {
        test(`${name}: a fresh checkout`, async () => {
          const twins = { git: freshClone(src), pc: freshClone(src) };
          const config = setup();
          for (const d of [twins.git, twins.pc])
            for (const [k, v] of config) git(d, ['config', k, v]);
          git(twins.git, ['checkout', '-q', 'base']);
          await checkout(twins.pc, { ref: 'base', racyWait: false });
          git(twins.git, ['status', '--porcelain']);
          git(twins.pc, ['status', '--porcelain']);
          assertStatusLikeGit(twins);
        });
      }
    }
  });
}

async function makeTwinsEdited(twinsFor) {
  const twins = await twinsFor('base');
  for (const d of [twins.git, twins.pc]) {
    fs.writeFileSync(path.join(d, 'd0/f4.txt'), 'local\n');
    fs.rmSync(path.join(d, 'd1/f5.txt'));
  }
  // The status that sees the local changes writes the cache again.
  git(twins.git, ['status', '--porcelain']);
  git(twins.pc, ['status', '--porcelain']);
  return twins;
}
