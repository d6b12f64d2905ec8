// Installing and loading: the package declares the one OS it serves, needs no build tool at run
// time, checks the build machine first and says in one message what is missing, builds as the
// configuration says (optimized for release), and a load failure names its real cause: a
// missing shared library, an addon built for another Node.js, a file for another platform.
// (npm pack + install into a scratch project: test/slow/install.test.mjs.)

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DIST_INDEX, PROJECT } from './helpers/run.mjs';
import { gitEnv, tmpDir } from './helpers/git.mjs';

const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT, 'package.json'), 'utf8'));
const CHECK = path.join(PROJECT, 'scripts', 'check-build.cjs');

function hasCommand(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

describe('package.json', () => {
  test('declares Linux as its only OS', () => {
    assert.deepEqual(pkg.os, ['linux']);
  });

  test('node-gyp is a build tool, not a runtime dependency', () => {
    assert.equal(pkg.dependencies['node-gyp'], undefined);
    assert.ok(pkg.devDependencies['node-gyp'], 'node-gyp is gone from devDependencies too');
    // What an install needs: the header-only binding library, at build time.
    assert.deepEqual(Object.keys(pkg.dependencies).sort(), ['node-addon-api']);
  });

  test('the install checks the build machine before node-gyp runs', () => {
    assert.match(pkg.scripts.install, /^node scripts\/check-build\.cjs && node-gyp rebuild$/);
    assert.ok(pkg.files.includes('scripts/'), 'scripts/ is not shipped');
  });
});

describe('the build', () => {
  // The generated makefile holds each configuration's flags; C++ files get CFLAGS_<cfg> then
  // CFLAGS_CC_<cfg>, so the last -O of those is the level the compiler uses.
  const makefile = path.join(PROJECT, 'build', 'pcheckout.target.mk');
  const level = (text, config) => {
    const flags = (name) => {
      const m = new RegExp(`^${name}_${config} :=((?:.*\\\\\\n)*.*)$`, 'm').exec(text);
      return m ? m[1].split(/[\s\\]+/).filter(Boolean) : [];
    };
    return [...flags('CFLAGS'), ...flags('CFLAGS_CC')].filter((f) => /^-O/.test(f)).pop();
  };

  test(
    'each configuration keeps its optimization level (no -O in binding.gyp overrides it)',
    { skip: fs.existsSync(makefile) ? false : 'no build/pcheckout.target.mk (not built here)' },
    () => {
      const text = fs.readFileSync(makefile, 'utf8');
      assert.equal(level(text, 'Release'), '-O3', "Release is not built with node's -O3");
      assert.equal(level(text, 'Debug'), '-O0', 'Debug is not built unoptimized');
    },
  );
});

describe('scripts/check-build.cjs', () => {
  const run = (env) =>
    spawnSync(process.execPath, [CHECK], { env: { ...process.env, ...env }, encoding: 'utf8' });

  test('this machine can build: silent success', { skip: !hasCommand('c++') && 'no c++' }, () => {
    const r = run({});
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /cannot build/);
  });

  test('no compiler, make or python3: one message naming each, and how to install them', () => {
    const bin = tmpDir('bare-path');
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    const r = run({ PATH: bin, CXX: '', npm_config_python: '', PYTHON: '' });
    assert.equal(r.status, 1);
    const text = r.stderr.trim();
    assert.match(text, /^pcheckout: cannot build its native addon: missing a C\+\+ compiler/);
    assert.match(text, /make/);
    assert.match(text, /python3/);
    assert.match(text, /apt-get install g\+\+ make python3 zlib1g-dev libdeflate-dev/);
    assert.match(text, /npm rebuild pcheckout/);
    assert.ok(text.split('\n').length <= 6, `not one short message:\n${text}`);
  });

  test('no zlib headers: named as such', { skip: !hasCommand('c++') && 'no c++' }, () => {
    // A compiler that searches no system include directory lacks zlib.h (and the rest).
    const r = run({ CXX: 'c++ -nostdinc' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /missing the zlib headers and library \(zlib\.h, -lz\)/);
    assert.doesNotMatch(r.stderr, /C\+\+ compiler/);
  });
});

describe('load failures name their cause', { skip: !hasCommand('cc') && 'no C compiler' }, () => {
  /** Imports the package in a child with PCHECKOUT_ADDON=file: the error it reports. */
  function loadWith(file) {
    const code = `
      const { checkout } = await import(process.env.PCHECKOUT_TEST_DIST);
      try { await checkout(process.cwd()); } catch (err) {
        console.log(JSON.stringify({ code: err.code, message: err.message }));
      }`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...gitEnv, PCHECKOUT_TEST_DIST: DIST_INDEX, PCHECKOUT_ADDON: file },
      cwd: PROJECT,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop());
    assert.equal(out.code, 'ERR_ADDON_LOAD', out.message);
    assert.ok(out.message.includes(file), 'the file tried is not named');
    return out.message;
  }

  function cc(dir, args) {
    const r = spawnSync('cc', args, { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }

  test('not built: says so, and how to build it', () => {
    const message = loadWith(path.join(tmpDir('no-addon'), 'pcheckout.node'));
    assert.match(message, /not found/);
    assert.match(message, /never built.*apt-get install g\+\+/s);
  });

  test('a file that is not a Linux binary for this machine', () => {
    const file = path.join(tmpDir('not-elf'), 'pcheckout.node');
    fs.writeFileSync(file, 'MZ this is not an ELF file');
    assert.match(loadWith(file), /not a Linux \w+ binary/);
  });

  test('a shared library it links is missing', () => {
    const dir = tmpDir('missing-lib');
    fs.writeFileSync(path.join(dir, 'gone.c'), 'int pcheckout_gone(void) { return 1; }\n');
    fs.writeFileSync(
      path.join(dir, 'addon.c'),
      'int pcheckout_gone(void);\nint pcheckout_uses(void) { return pcheckout_gone(); }\n',
    );
    cc(dir, ['-shared', '-fPIC', '-o', 'libpcheckoutgone.so', 'gone.c']);
    cc(dir, ['-shared', '-fPIC', '-o', 'pcheckout.node', 'addon.c', '-L.', '-lpcheckoutgone']);
    fs.rmSync(path.join(dir, 'libpcheckoutgone.so'));
    const message = loadWith(path.join(dir, 'pcheckout.node'));
    assert.match(message, /a shared library it needs is missing: libpcheckoutgone\.so/);
  });

  test('built for another Node.js (NODE_MODULE_VERSION)', () => {
    // A module that registers itself, as every addon does, declaring ABI version 1.
    const dir = tmpDir('other-abi');
    fs.writeFileSync(
      path.join(dir, 'old.c'),
      `struct node_module { int nm_version; unsigned int nm_flags; void* nm_dso_handle;
         const char* nm_filename; void* nm_register_func; void* nm_context_register_func;
         const char* nm_modname; void* nm_priv; struct node_module* nm_link; };
       void node_module_register(void* mod);
       static struct node_module m = { 1, 0, 0, "old.c", 0, 0, "old", 0, 0 };
       __attribute__((constructor)) static void init(void) { node_module_register(&m); }\n`,
    );
    cc(dir, ['-shared', '-fPIC', '-o', 'pcheckout.node', 'old.c']);
    const message = loadWith(path.join(dir, 'pcheckout.node'));
    assert.match(
      message,
      new RegExp(
        `another Node\\.js \\(NODE_MODULE_VERSION 1; Node\\.js ${process.version} needs ${process.versions.modules}\\)`,
      ),
    );
  });
});
