// Twin repositories for the "git's everyday rules" tests: the same repository copied twice, git
// runs a command in one, pcheckout the same in the other, and what each left is compared.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { git, tmpPath } from './git.mjs';

/** Two full copies (worktree, index, refs, reflogs) of the repository at `srcDir`. */
export function twins(srcDir, prefix = 'twin') {
  const make = (side) => {
    const dir = tmpPath(`${prefix}-${side}`);
    fs.cpSync(srcDir, dir, { recursive: true, verbatimSymlinks: true });
    return dir;
  };
  return { gitDir: make('git'), ourDir: make('ours') };
}

function lastLog(file) {
  if (!fs.existsSync(file)) return null;
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  const last = lines[lines.length - 1];
  // old new ident\tmessage: the ident's time may differ by a second between the twins.
  const [head, message] = last.split('\t');
  const [oldOid, newOid] = head.split(' ');
  return { oldOid, newOid, message, count: lines.length };
}

/** What a checkout leaves that git users look at (`status`: also `git status --porcelain`). */
export function observe(dir, { status = true } = {}) {
  const gitDir = path.join(dir, '.git');
  return {
    head: fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8'),
    headLog: lastLog(path.join(gitDir, 'logs', 'HEAD')),
    refs: git(dir, ['for-each-ref', '--format=%(refname) %(objectname)']),
    index: git(dir, ['ls-files', '-s']),
    ...(status ? { status: git(dir, ['status', '--porcelain']) } : {}),
  };
}

/** The two twins must agree on HEAD, HEAD's last reflog line, refs, index and status. */
export function assertSameCheckout(ourDir, gitDir, what) {
  const ours = observe(ourDir);
  const theirs = observe(gitDir, { status: false });
  assert.equal(ours.status, '', `${what}: git status after pcheckout`);
  delete ours.status;
  assert.deepEqual(ours, theirs, `${what}: pcheckout and git differ`);
}
