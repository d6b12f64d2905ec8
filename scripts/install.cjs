#!/usr/bin/env node
// The package's install script. The package ships a prebuilt addon per platform
// (prebuilds/<platform>-<arch>/, N-API: one binary serves every Node.js version; made by
// scripts/prebuild.cjs when the package is packed). When the one for this machine loads, the
// install is done: nothing to compile, no compiler needed. Otherwise, or when asked
// (PCHECKOUT_BUILD_FROM_SOURCE=1, npm rebuild, npm install --build-from-source), the addon is
// built from source as before: scripts/check-build.cjs checks the machine first, node-gyp
// builds, and an installed package then drops the object files (2.6 MB) it no longer needs.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

function say(line) {
  process.stderr.write(`pcheckout: ${line}\n`);
}

/** Why to build from source even where a prebuild fits, or null. */
function askedToBuild() {
  const env = process.env;
  if (env.PCHECKOUT_BUILD_FROM_SOURCE === '1') return 'PCHECKOUT_BUILD_FROM_SOURCE=1';
  if (env.npm_command === 'rebuild') return 'npm rebuild';
  // npm install --build-from-source (the prebuild convention's flag), for every package or this one.
  const flag = env.npm_config_build_from_source;
  if (flag === 'true' || flag === 'pcheckout') return '--build-from-source';
  // A checkout of the sources (npm install in the repository, as CI runs it): its prebuilds/,
  // if a pack left one, may be older than native/.
  if (!installed()) return 'a checkout of the sources';
  return null;
}

/** The prebuild that fits this machine (node-gyp-build's matching), or null. */
function prebuild() {
  let ngb;
  try {
    ngb = require('node-gyp-build/node-gyp-build.js');
  } catch {
    return null;
  }
  const list = (dir) => {
    try {
      return fs.readdirSync(dir);
    } catch {
      return [];
    }
  };
  const dir = path.join(root, 'prebuilds');
  const tuple = list(dir)
    .map(ngb.parseTuple)
    .filter(ngb.matchTuple(process.platform, process.arch))
    .sort(ngb.compareTuples)[0];
  if (!tuple) return null;
  const winner = list(path.join(dir, tuple.name))
    .map(ngb.parseTags)
    .filter(ngb.matchTags('node', process.versions.modules))
    .sort(ngb.compareTags('node'))[0];
  return winner ? path.join(dir, tuple.name, winner.file) : null;
}

/** Whether `file` loads in a fresh Node.js and is pcheckout's addon: null, or why not. */
function loadProblem(file) {
  const code =
    "const a = require(process.argv[1]); if (!Array.isArray(a.errorCodes)) throw new Error('not pcheckout\\'s addon');";
  const r = spawnSync(process.execPath, ['-e', code, file], { encoding: 'utf8' });
  if (r.status === 0) return null;
  const lines = (r.stderr || '').split('\n').filter((l) => /Error/.test(l));
  return lines[0] ? lines[0].trim() : `exit status ${r.status}`;
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    say(`cannot run ${cmd}: ${r.error.message}`);
    return 1;
  }
  return r.status === null ? 1 : r.status;
}

/** node-gyp as npm runs it: the one npm bundles (npm_config_node_gyp), else one on PATH. */
function nodeGyp(args) {
  const bundled = process.env.npm_config_node_gyp;
  if (bundled && fs.existsSync(bundled)) return run(process.execPath, [bundled, ...args]);
  return run('node-gyp', args);
}

/** Whether this is an installed package (in a node_modules), not a checkout of the sources. */
function installed() {
  return root.split(path.sep).includes('node_modules');
}

/** In an installed package, what only the build needed: the object files and their deps. */
function dropObjects() {
  if (!installed()) return; // a checkout: keep incremental builds
  for (const config of ['Release', 'Debug']) {
    for (const name of ['obj.target', 'obj', '.deps']) {
      fs.rmSync(path.join(root, 'build', config, name), { recursive: true, force: true });
    }
  }
}

function main() {
  const asked = askedToBuild();
  if (!asked) {
    const file = prebuild();
    if (file) {
      const problem = loadProblem(file);
      if (problem === null) return 0; // the prebuild serves: nothing to build
      say(
        `the prebuilt addon ${path.relative(root, file)} does not load here (${problem}); building from source.`,
      );
    }
  }
  const check = run(process.execPath, [path.join(__dirname, 'check-build.cjs')]);
  if (check !== 0) return check;
  const status = nodeGyp(['rebuild']);
  if (status === 0) dropObjects();
  return status;
}

process.exitCode = main();
