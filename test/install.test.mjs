// Installing and loading: the package declares the one OS it serves, needs no build tool at run
// time, checks the build machine first and says in one message what is missing, builds as the
// configuration says (optimized for release), and a load failure names its real cause: a
// missing shared library, an addon built for another Node.js, a file for another platform.
// (npm pack + install into a scratch project: test/slow/install.test.mjs.)

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DIST_INDEX, PROJECT } from './helpers/run.mjs';
import { ALLOWED } from './helpers/package-files.mjs';
import { Repo, freshClone, gitEnv, gitOut, tmpDir } from './helpers/git.mjs';

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
    // What an install needs: the header-only binding library (at build time) and the prebuild
    // matching (node-gyp-build, no dependencies of its own, also bundled into dist/lib.cjs).
    assert.deepEqual(Object.keys(pkg.dependencies).sort(), ['node-addon-api', 'node-gyp-build']);
    assert.ok(pkg.devDependencies.prebuildify, 'prebuildify makes the prebuild (prepack)');
  });

  test('the install runs scripts/install.cjs, shipped with what it runs', () => {
    assert.equal(pkg.scripts.install, 'node scripts/install.cjs');
    for (const file of ['scripts/install.cjs', 'scripts/check-build.cjs', 'binding.gyp']) {
      assert.ok(pkg.files.includes(file), `${file} is not shipped`);
    }
    // The prebuild is made when the package is packed, and loaded through node-gyp-build's matching.
    assert.equal(pkg.scripts.prepack, 'node scripts/prebuild.cjs');
    assert.ok(pkg.files.includes('prebuilds/'));
    assert.ok(pkg.dependencies['node-gyp-build']);
  });
});

describe('scripts/install.cjs: the prebuild if it loads, else a build from source', () => {
  const INSTALL = path.join(PROJECT, 'scripts', 'install.cjs');
  /** A copy of the package's install scripts in <tmp>/node_modules/pcheckout, as npm lays it out. */
  function installedCopy(prefix, prebuild) {
    const root = path.join(tmpDir(prefix), 'node_modules', 'pcheckout');
    fs.mkdirSync(path.join(root, 'scripts'), { recursive: true });
    for (const f of ['install.cjs', 'check-build.cjs']) {
      fs.copyFileSync(path.join(PROJECT, 'scripts', f), path.join(root, 'scripts', f));
    }
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'pcheckout' }));
    // Its dependency, as npm installs it beside it.
    fs.cpSync(
      path.join(PROJECT, 'node_modules', 'node-gyp-build'),
      path.join(root, '..', 'node-gyp-build'),
      { recursive: true },
    );
    if (prebuild !== undefined) {
      const dir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
      fs.mkdirSync(dir, { recursive: true });
      if (typeof prebuild === 'string')
        fs.copyFileSync(prebuild, path.join(dir, 'pcheckout.glibc.node'));
      else fs.writeFileSync(path.join(dir, 'pcheckout.glibc.node'), prebuild);
    }
    return root;
  }
  /** Runs the install script with nothing to build with on PATH (node only). */
  function install(root, env = {}) {
    const bin = tmpDir('install-bin');
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    return spawnSync(process.execPath, [path.join(root, 'scripts', 'install.cjs')], {
      cwd: root,
      env: {
        ...process.env,
        PATH: bin,
        CXX: '',
        npm_config_python: '',
        PYTHON: '',
        npm_command: 'install',
        npm_config_node_gyp: '',
        ...env,
      },
      encoding: 'utf8',
    });
  }
  const built = path.join(PROJECT, 'build', 'Release', 'pcheckout.node');
  const skipNoBuild = !fs.existsSync(built) && 'no build/Release/pcheckout.node';

  test(
    'a prebuild that loads: the install is done, nothing built, no compiler needed',
    { skip: skipNoBuild },
    () => {
      const root = installedCopy('install-prebuild', built);
      const r = install(root);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.ok(!fs.existsSync(path.join(root, 'build')), 'something was built');
    },
  );

  for (const [name, env] of [
    ['PCHECKOUT_BUILD_FROM_SOURCE=1', { PCHECKOUT_BUILD_FROM_SOURCE: '1' }],
    ['npm rebuild', { npm_command: 'rebuild' }],
  ]) {
    test(`${name}: builds from source even where the prebuild loads`, { skip: skipNoBuild }, () => {
      const r = install(installedCopy('install-asked', built), env);
      // Here it gets as far as the build machine's check (nothing to build with on PATH).
      assert.equal(r.status, 1);
      assert.match(r.stderr, /cannot build its native addon: missing a C\+\+ compiler/);
    });
  }

  test('a prebuild that does not load: says so, then builds from source', () => {
    const r = install(installedCopy('install-bad-prebuild', Buffer.from('not an ELF file')));
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /the prebuilt addon prebuilds\/[\w-]+\/pcheckout\.glibc\.node does not load here \(.*\); building from source/,
    );
    assert.match(r.stderr, /missing a C\+\+ compiler/);
  });

  test('no prebuild for this machine: builds from source', () => {
    const r = install(installedCopy('install-no-prebuild'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^pcheckout: cannot build its native addon: missing a C\+\+ compiler/);
  });
});

describe('an installed package without a build: the prebuild, or why nothing loads', () => {
  const built = path.join(PROJECT, 'build', 'Release', 'pcheckout.node');
  /** The shipped JavaScript (the bundle and its entries) in a package with no build/. */
  function packageCopy(prefix, prebuilds = {}) {
    const root = path.join(tmpDir(prefix), 'pcheckout');
    fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
    for (const f of ['lib.cjs', 'index.js', 'index.cjs', 'cli.cjs']) {
      fs.copyFileSync(path.join(PROJECT, 'dist', f), path.join(root, 'dist', f));
    }
    fs.copyFileSync(path.join(PROJECT, 'package.json'), path.join(root, 'package.json'));
    for (const [rel, from] of Object.entries(prebuilds)) {
      fs.mkdirSync(path.dirname(path.join(root, 'prebuilds', rel)), { recursive: true });
      fs.copyFileSync(from, path.join(root, 'prebuilds', rel));
    }
    return root;
  }
  function cli(root, args) {
    const r = spawnSync(process.execPath, [path.join(root, 'dist', 'cli.cjs'), ...args], {
      env: gitEnv,
      encoding: 'utf8',
    });
    return r;
  }
  const here = `${process.platform}-${process.arch}`;

  test('no build and no prebuild: ERR_ADDON_LOAD says the install scripts were skipped', () => {
    const root = packageCopy('no-addon-at-all');
    const r = cli(root, ['--json', PROJECT]);
    assert.equal(r.status, 128, r.stderr);
    const { error } = JSON.parse(r.stdout);
    assert.equal(error.code, 'ERR_ADDON_LOAD');
    assert.match(error.message, /no prebuilt addon/);
    assert.match(
      error.message,
      /install scripts were skipped \(npm install --ignore-scripts, or pnpm/,
    );
    assert.match(error.message, /npm rebuild pcheckout/);
    assert.match(error.message, /apt-get install g\+\+/);
  });

  test(
    'only prebuilds for other machines: they are named, and this one',
    { skip: !fs.existsSync(built) && 'not built' },
    () => {
      const other = process.arch === 'arm64' ? 'linux-x64' : 'linux-arm64';
      const root = packageCopy('other-prebuilds', { [`${other}/pcheckout.glibc.node`]: built });
      const r = cli(root, [PROJECT]);
      assert.equal(r.status, 128);
      assert.match(
        r.stderr,
        new RegExp(
          `prebuilds \\(${other}/pcheckout\\.glibc\\.node\\) are not for this machine, ${here} \\(glibc\\)`,
        ),
      );
      assert.match(r.stderr, /install scripts were skipped/);
    },
  );

  test(
    'the prebuild for this machine is loaded, and --json says so',
    { skip: !fs.existsSync(built) && 'not built' },
    () => {
      const root = packageCopy('prebuild-only', { [`${here}/pcheckout.glibc.node`]: built });
      const src = Repo.init('prebuild-src');
      src.write('a.txt', 'a\n').commit('one');
      const dir = freshClone(src);
      const r = cli(root, ['--json', '--racy-wait=never', dir]);
      assert.equal(r.status, 0, r.stderr);
      const summary = JSON.parse(r.stdout);
      assert.deepEqual(summary.addon, {
        kind: 'prebuild',
        file: path.join(root, 'prebuilds', here, 'pcheckout.glibc.node'),
      });
      assert.equal(gitOut(dir, 'status', '--porcelain'), '');
    },
  );
});

describe('what the package ships', () => {
  test('the tarball holds nothing outside the allow-list, and all that runs', () => {
    // The file list as `npm pack` makes it (no scripts: no prebuild made, no rebuild).
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: PROJECT,
      env: { ...process.env, HOME: os.userInfo().homedir },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const files = JSON.parse(r.stdout.slice(r.stdout.indexOf('[')))[0].files.map((f) => f.path);
    const outside = files.filter((f) => !ALLOWED.some((re) => re.test(f)));
    assert.deepEqual(outside, [], 'shipped but not allowed');
    for (const f of ['dist/lib.cjs', 'dist/index.js', 'dist/index.cjs', 'dist/cli.cjs']) {
      assert.ok(files.includes(f), `${f} is not shipped`);
    }
    for (const f of [pkg.exports['.'].import.types, pkg.exports['.'].require.types]) {
      assert.ok(files.includes(f.replace(/^\.\//, '')), `${f} is not shipped`);
    }
    for (const source of pkg.gypfile === false ? [] : gypSources()) {
      assert.ok(files.includes(source), `${source} (binding.gyp) is not shipped`);
    }
  });

  test("the bundle loads no file of the package's but itself and package.json", () => {
    // What dist/lib.cjs reaches at run time: Node's built-ins, its own file (the orchestrator
    // thread's script), ../package.json (the version) and the addon (build/ or prebuilds/).
    const text = fs.readFileSync(path.join(PROJECT, 'dist', 'lib.cjs'), 'utf8');
    const required = [...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    assert.deepEqual(
      required.filter((m) => !/^(node:)?[a-z_]+$/.test(m)),
      [],
      'requires a module by path',
    );
    const urls = [...new Set([...text.matchAll(/new URL\("([^"]+)"/g)].map((m) => m[1]))].sort();
    assert.deepEqual(urls, ['../package.json', './lib.cjs']);
  });
});

/** The native sources binding.gyp compiles (and the headers beside them). */
function gypSources() {
  const gyp = fs.readFileSync(path.join(PROJECT, 'binding.gyp'), 'utf8');
  return [...gyp.matchAll(/"(native\/[^"]+\.cc)"/g)].map((m) => m[1]);
}

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
