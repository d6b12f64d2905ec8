// The package as people install it: `npm pack`, then `npm install <tarball>` into a scratch
// project from npm's cache (offline). npm builds the addon with the node-gyp it bundles (no
// node-gyp in the project), and the installed package checks a repository out. On a machine
// with no compiler, the install stops with check-build's one message, not compiler output.
// Slow (the addon is compiled once per install): run by `npm run test:slow`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { Repo, freshClone, gitOut, tmpDir } from '../helpers/git.mjs';
import { PROJECT } from '../helpers/run.mjs';

// npm as its user runs it: that user's npm config (nodedir) and cache, not the tests' HOME.
const NPM_ENV = { ...process.env, HOME: os.userInfo().homedir };
delete NPM_ENV.XDG_CONFIG_HOME;

const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT, 'package.json'), 'utf8'));

function npm(args, { cwd, env = NPM_ENV } = {}) {
  const r = spawnSync('npm', [...args, '--no-audit', '--no-fund'], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.error) throw r.error;
  return r;
}

/** npm install from the cache only; if the cache lacks a registry document, allow a fetch. */
function installFromCache(tarball, cwd, env) {
  const offline = npm(['install', '--offline', tarball], { cwd, env });
  if (offline.status === 0 || !/ENOTCACHED/.test(offline.stderr)) return offline;
  process.stderr.write('# npm cache incomplete: installing with --prefer-offline\n');
  return npm(['install', '--prefer-offline', tarball], { cwd, env });
}

function scratchProject(prefix) {
  const dir = tmpDir(prefix);
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: `${prefix}-scratch`, version: '1.0.0', private: true }),
  );
  return dir;
}

describe('npm pack, then npm install of the tarball', () => {
  let tarball;
  before(() => {
    const out = tmpDir('pack');
    const r = npm(['pack', '--pack-destination', out], { cwd: PROJECT });
    assert.equal(r.status, 0, r.stderr);
    tarball = path.join(out, `${pkg.name}-${pkg.version}.tgz`);
    assert.ok(fs.existsSync(tarball), `no ${tarball}`);
  });

  test("builds the addon with npm's own node-gyp and checks a repository out", () => {
    const project = scratchProject('install');
    const r = installFromCache(tarball, project);
    assert.equal(r.status, 0, `npm install failed:\n${r.stderr}`);
    const installed = path.join(project, 'node_modules', 'pcheckout');
    assert.ok(fs.existsSync(path.join(installed, 'build', 'Release', 'pcheckout.node')));
    assert.ok(
      !fs.existsSync(path.join(project, 'node_modules', 'node-gyp')),
      'node-gyp was installed as a dependency',
    );
    const src = Repo.init('installed-src');
    src.write('a.txt', 'a\n').symlink('link', 'a.txt');
    src.commit('one');
    const dir = freshClone(src);
    const run = spawnSync(
      process.execPath,
      [path.join(project, 'node_modules', '.bin', 'pcheckout'), '--racy-wait=never', dir],
      { encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });

  test('without a compiler: one message saying what to install', () => {
    const project = scratchProject('no-compiler');
    // A PATH with node, npm and a shell, and nothing to build with.
    const bin = tmpDir('no-compiler-bin');
    const npmCli = fs.realpathSync(
      spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim(),
    );
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    fs.symlinkSync(npmCli, path.join(bin, 'npm'));
    fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
    const env = { ...NPM_ENV, PATH: bin, CXX: '' };
    const r = spawnSync(
      path.join(bin, 'npm'),
      ['install', '--offline', '--no-audit', '--no-fund', tarball],
      { cwd: project, env, encoding: 'utf8', timeout: 600_000 },
    );
    assert.notEqual(r.status, 0, 'the install succeeded without a compiler');
    assert.match(
      r.stderr,
      /pcheckout: cannot build its native addon: missing a C\+\+ compiler \(g\+\+ or clang\+\+\), make, python3/,
    );
    assert.doesNotMatch(r.stderr, /gyp ERR!/, 'node-gyp ran anyway');
  });
});
