// core.symlinks=false (a link's target written as a plain file) and core.filemode=false (the
// executable bit on disk does not count; the index keeps its mode), against git: fresh
// checkouts, switches, forced checkouts and restores, workers 1 and 2, `git status` clean.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { Repo, freshClone, git } from './helpers/git.mjs';
import { compareWithGit } from './helpers/twin.mjs';

function buildRepo(prefix) {
  const repo = Repo.init(prefix);
  repo.write('a.txt', 'a\n');
  repo.write('run.sh', '#!/bin/sh\necho run\n', { exec: true });
  repo.write('plain.sh', 'echo plain\n');
  repo.symlink('link', 'a.txt');
  repo.symlink('dir/uplink', '../run.sh');
  repo.commit('one');
  repo.branch('one');
  repo.write('a.txt', 'a changed\n');
  repo.write('plain.sh', 'echo plain 2\n');
  repo.symlink('link', 'run.sh');
  repo.symlink('newlink', 'dir');
  repo.chmod('run.sh', false);
  repo.commit('two');
  repo.branch('two');
  repo.gc();
  return repo;
}

function withConfig(repo, config) {
  const copy = repo.copy('sf-config');
  for (const [k, v] of Object.entries(config)) git(copy.dir, ['config', k, v]);
  return copy;
}

const run = (op) => (dir) => checkout(dir, { racyWait: false, ...op });

describe('core.symlinks=false and core.filemode=false', () => {
  const repo = buildRepo('symlinks-filemode');

  for (const config of [{ 'core.symlinks': 'false' }, { 'core.filemode': 'false' }]) {
    const name = JSON.stringify(config);
    test(`${name}: a fresh checkout as git's, workers 1 and 2`, async () => {
      const src = withConfig(repo, config);
      for (const opts of [{ workers: 1 }, { workers: 2, threshold: 0 }]) {
        const dir = freshClone(src, { method: 'copy' });
        await checkout(dir, { racyWait: false, ...opts });
        assertMatchesGit(dir, src, { method: 'copy' });
        if (config['core.symlinks']) {
          const st = fs.lstatSync(path.join(dir, 'link'));
          assert.ok(st.isFile(), 'link written as a plain file');
          assert.equal(fs.readFileSync(path.join(dir, 'link'), 'utf8'), 'run.sh');
        }
      }
    });

    test(`${name}: switch, force and restore as git's`, async () => {
      const src = withConfig(repo, config);
      for (const op of [{ ref: 'one' }, { ref: 'one', workers: 2, threshold: 0 }]) {
        await compareWithGit(src, { at: 'two', op, run: run(op) });
      }
      // Local changes git does not count (the exec bit with filemode off) or counts. The bit is
      // set on a copy under a new inode: a chmod in place changes only the ctime, which git
      // compares in whole seconds, so whether checkout -f rewrote the file depended on whether
      // the chmod fell in the checkout's second (the twins could land on either side).
      const execCopy = (dir, name) => {
        const file = path.join(dir, name);
        fs.copyFileSync(file, `${file}.tmp`);
        fs.chmodSync(`${file}.tmp`, 0o755);
        fs.renameSync(`${file}.tmp`, file);
      };
      const mutate = (dir) => {
        execCopy(dir, 'plain.sh');
        execCopy(dir, 'run.sh');
        fs.rmSync(path.join(dir, 'link'));
        fs.rmSync(path.join(dir, 'dir', 'uplink'));
      };
      // The same bytes under a new inode, executable: git's checkout -f and checkout-index
      // do not refresh first, so the changed stat data alone makes them rewrite the file (644
      // from the index); a switch refreshes (hashes) first and keeps it.
      const copied = (dir) => execCopy(dir, 'plain.sh');
      for (const op of [{ force: true }, { restore: true }, { ref: 'one' }]) {
        if (op.ref !== undefined && !config['core.filemode']) continue; // a local change then
        await compareWithGit(src, { at: 'two', mutate: copied, op, run: run(op) });
      }
      for (const op of [{ ref: 'one' }, { force: true }, { restore: true }]) {
        // With the exec bit counting, the switch meets local changes (git refuses it too).
        const refused = op.ref !== undefined && !config['core.filemode'];
        await compareWithGit(src, {
          at: 'two',
          mutate,
          op,
          run: run(op),
          expect: refused ? 'ERR_WOULD_OVERWRITE' : 'success',
        });
      }
    });
  }
});
