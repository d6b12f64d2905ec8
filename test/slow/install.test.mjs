// The package as people install it: `npm pack` (whose prepack makes the prebuild), then
// `npm install <tarball>` into a scratch project from npm's cache (offline). With the prebuild:
// nothing compiled, with or without install scripts, no compiler needed; require() and import
// both work, and the types check for CommonJS and ES module consumers under module node16,
// nodenext and bundler. Without a prebuild for the machine (prebuilds/ removed from the
// tarball), npm builds the addon from source with the node-gyp it bundles, and on a machine
// with no compiler the install stops with check-build's one message, not compiler output.
// The tarball holds what runs and nothing else, and is at most 550 kB (the bound is against
// shipping what does not run — maps, docs, tests —, which the allow-list also checks; what runs
// grows with the addon: 471 kB on 2026-12-04, 505-507 kB with the store on 2026-12-06).
// Slow (the prebuild and a source build are compiled): run by `npm run test:slow`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { Repo, freshClone, gitOut, tmpDir } from '../helpers/git.mjs';
import { PROJECT } from '../helpers/run.mjs';
import { ALLOWED } from '../helpers/package-files.mjs';

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
function installFromCache(tarball, cwd, env, extra = []) {
  const offline = npm(['install', '--offline', ...extra, tarball], { cwd, env });
  if (offline.status === 0 || !/ENOTCACHED/.test(offline.stderr)) return offline;
  process.stderr.write('# npm cache incomplete: installing with --prefer-offline\n');
  return npm(['install', '--prefer-offline', ...extra, tarball], { cwd, env });
}

function scratchProject(prefix) {
  const dir = tmpDir(prefix);
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: `${prefix}-scratch`, version: '1.0.0', private: true }),
  );
  return dir;
}

/** A copy of `tarball` without prebuilds/: a package with no prebuild for this machine. */
function withoutPrebuilds(tarball) {
  const dir = tmpDir('unpacked');
  const x = spawnSync('tar', ['-xzf', tarball, '-C', dir]);
  assert.equal(x.status, 0, String(x.stderr));
  fs.rmSync(path.join(dir, 'package', 'prebuilds'), { recursive: true, force: true });
  const out = path.join(tmpDir('repacked'), 'pcheckout-noprebuild.tgz');
  const c = spawnSync('tar', ['-czf', out, '-C', dir, 'package']);
  assert.equal(c.status, 0, String(c.stderr));
  return out;
}

function checksOut(project) {
  const src = Repo.init('installed-src');
  src.write('a.txt', 'a\n').symlink('link', 'a.txt');
  src.commit('one');
  const dir = freshClone(src);
  const run = spawnSync(
    process.execPath,
    [path.join(project, 'node_modules', '.bin', 'pcheckout'), '--json', '--racy-wait=never', dir],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  return JSON.parse(run.stdout);
}

describe('npm pack, then npm install of the tarball', () => {
  let tarball;
  let files;
  before(() => {
    const out = tmpDir('pack');
    // The real pack: its prepack builds the prebuild (scripts/prebuild.cjs), prepare the bundle.
    const r = npm(['pack', '--json', '--pack-destination', out], { cwd: PROJECT });
    assert.equal(r.status, 0, r.stderr);
    const [info] = JSON.parse(r.stdout.slice(r.stdout.indexOf('[')));
    files = info.files.map((f) => f.path);
    tarball = path.join(out, `${pkg.name}-${pkg.version}.tgz`);
    assert.ok(fs.existsSync(tarball), `no ${tarball}`);
    process.stderr.write(
      `# tarball: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.length} files\n`,
    );
  });

  test('holds the prebuild, and is at most 550 kB', () => {
    const prebuild = `prebuilds/${process.platform}-${process.arch}/pcheckout.glibc.node`;
    assert.ok(files.includes(prebuild), `no ${prebuild} in ${files.join(', ')}`);
    assert.ok(fs.statSync(tarball).size <= 550_000, `${fs.statSync(tarball).size} bytes`);
    // Its allow-list, as test/install.test.mjs checks it without packing.
    for (const f of files)
      assert.ok(
        ALLOWED.some((re) => re.test(f)),
        `${f} is not allowed`,
      );
  });

  test('--ignore-scripts: nothing built, the prebuild serves; a CommonJS and an ES consumer', () => {
    const project = scratchProject('ignore-scripts');
    const r = installFromCache(tarball, project, undefined, ['--ignore-scripts']);
    assert.equal(r.status, 0, `npm install failed:\n${r.stderr}`);
    const installed = path.join(project, 'node_modules', 'pcheckout');
    assert.ok(!fs.existsSync(path.join(installed, 'build')), 'something was built');
    const summary = checksOut(project);
    assert.equal(summary.addon.kind, 'prebuild');
    assert.equal(summary.inflater, 'libdeflate');
    // No libdeflate needed at run time.
    const needed = spawnSync('readelf', ['-d', summary.addon.file], { encoding: 'utf8' });
    if (needed.status === 0) assert.doesNotMatch(needed.stdout, /libdeflate/);

    const src = Repo.init('consumer-src');
    src.write('a.txt', 'a\n').commit('one');
    const cjsDir = freshClone(src);
    const esmDir = freshClone(src);
    fs.writeFileSync(
      path.join(project, 'cjs.cjs'),
      `const { checkout, PcheckoutError } = require('pcheckout');
       checkout(process.argv[2], { racyWait: 'never' }).then((s) => {
         if (typeof PcheckoutError !== 'function') throw new Error('no PcheckoutError');
         console.log(s.files);
       });\n`,
    );
    fs.writeFileSync(
      path.join(project, 'esm.mjs'),
      `const { checkout, PcheckoutError } = await import('pcheckout');
       const cjs = (await import('node:module')).createRequire(import.meta.url)('pcheckout');
       if (cjs.PcheckoutError !== PcheckoutError) throw new Error('two instances');
       console.log((await checkout(process.argv[2], { racyWait: 'never' })).files);\n`,
    );
    for (const [script, dir] of [
      ['cjs.cjs', cjsDir],
      ['esm.mjs', esmDir],
    ]) {
      const run = spawnSync(process.execPath, [script, dir], { cwd: project, encoding: 'utf8' });
      assert.equal(run.status, 0, `${script}: ${run.stderr}`);
      assert.equal(run.stdout.trim(), '1', script);
      assert.equal(gitOut(dir, 'status', '--porcelain'), '', script);
    }
  });

  test('the types check: CommonJS and ES module consumers, module node16, nodenext and bundler', () => {
    const project = scratchProject('types');
    const r = installFromCache(tarball, project, undefined, ['--ignore-scripts']);
    assert.equal(r.status, 0, r.stderr);
    // Node's own types, from this project (the consumer's would be in its devDependencies).
    fs.symlinkSync(
      path.join(PROJECT, 'node_modules', '@types'),
      path.join(project, 'node_modules', '@types'),
    );
    const body = `
      const s: CheckoutSummary = await checkout('.', { workers: 2, racyWait: 'never' });
      const n: number = s.files;
      const e: PcheckoutError = new PcheckoutError('ERR_BAD_REF', 'x');
      const code: ErrorCode = e.code;
      const known: boolean = code in ErrorCodes;
      // @ts-expect-error: not an option
      await checkout('.', { wrokers: 2 });
      export { n, known };\n`;
    fs.writeFileSync(
      path.join(project, 'esm.mts'),
      `import { checkout, PcheckoutError, ErrorCodes, type CheckoutSummary, type ErrorCode } from 'pcheckout';\n${body}`,
    );
    fs.writeFileSync(
      path.join(project, 'cjs.cts'),
      // Both ways a CommonJS module in TypeScript takes it: import = require, and import
      // syntax (compiled to require() in a .cts).
      `import pc = require('pcheckout');
       import { checkout, PcheckoutError, ErrorCodes, type CheckoutSummary, type ErrorCode } from 'pcheckout';
       const same: typeof checkout = pc.checkout;
       async function main(): Promise<void> {${body.replace('export { n, known };', 'void n; void known; void same;')}}
       void main;\n`,
    );
    const tsc = path.join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const [module, resolution] of [
      ['node16', 'node16'],
      ['nodenext', 'nodenext'],
      ['preserve', 'bundler'],
    ]) {
      const args = [
        tsc,
        '--noEmit',
        '--strict',
        '--exactOptionalPropertyTypes',
        '--module',
        module,
        '--moduleResolution',
        resolution,
        '--target',
        'es2022',
        '--types',
        'node',
        'esm.mts',
        'cjs.cts',
      ];
      const t = spawnSync(process.execPath, args, { cwd: project, encoding: 'utf8' });
      assert.equal(t.status, 0, `tsc --module ${module}:\n${t.stdout}${t.stderr}`);
    }
  });

  test('with install scripts: the prebuild loads, nothing is compiled', () => {
    const project = scratchProject('install');
    const r = installFromCache(tarball, project);
    assert.equal(r.status, 0, `npm install failed:\n${r.stderr}`);
    const installed = path.join(project, 'node_modules', 'pcheckout');
    assert.ok(!fs.existsSync(path.join(installed, 'build')), 'built from source');
    assert.equal(checksOut(project).addon.kind, 'prebuild');
  });

  test("no prebuild for the machine: built with npm's own node-gyp, object files removed", () => {
    const project = scratchProject('source-build');
    const r = installFromCache(withoutPrebuilds(tarball), project);
    assert.equal(r.status, 0, `npm install failed:\n${r.stderr}`);
    const installed = path.join(project, 'node_modules', 'pcheckout');
    assert.ok(fs.existsSync(path.join(installed, 'build', 'Release', 'pcheckout.node')));
    assert.ok(
      !fs.existsSync(path.join(installed, 'build', 'Release', 'obj.target')),
      '.o files kept',
    );
    assert.ok(
      !fs.existsSync(path.join(project, 'node_modules', 'node-gyp')),
      'node-gyp was installed as a dependency',
    );
    assert.equal(checksOut(project).addon.kind, 'build');
  });

  test('no prebuild and without a compiler: one message saying what to install', () => {
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
      ['install', '--offline', '--no-audit', '--no-fund', withoutPrebuilds(tarball)],
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
