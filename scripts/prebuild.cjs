#!/usr/bin/env node
// Makes the package's prebuilt addon for this machine, prebuilds/<platform>-<arch>/
// pcheckout.napi.<libc>.node, with prebuildify (the ecosystem's convention, which
// node-gyp-build's matching reads: src/addon/prebuild.ts, scripts/install.cjs). Run by `npm pack`
// and `npm publish` (the prepack script), so the tarball carries a prebuild built from these very
// sources; prebuilds/ is not committed.
// N-API (NAPI_VERSION in binding.gyp): one binary serves every Node.js version this package
// supports. libdeflate is linked in statically (PCHECKOUT_LIBDEFLATE=static, see
// scripts/detect-libdeflate.cjs) or not at all (zlib inflates): the prebuild must not need a
// libdeflate on the machine that installs it. It is built at -O2 (PCHECKOUT_PREBUILD=1, binding.gyp): 25 kB
// less of the packed tarball, no difference measured on a fresh checkout. It is built in a scratch copy of the sources, so
// that the checkout's own build/ (a debug or sanitizer build, say) stays as it is.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const out = path.join(root, 'prebuilds');

function fail(message) {
  process.stderr.write(`pcheckout prebuild: ${message}\n`);
  process.exit(1);
}

/** The Node.js headers node-gyp should build against without a download: npm's nodedir. */
function nodedir() {
  const configured = process.env.npm_config_nodedir;
  if (configured && configured !== 'undefined') return configured;
  const mine = path.join(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(mine, 'include', 'node', 'node_api.h')) ? mine : undefined;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-prebuild-'));
try {
  for (const name of ['binding.gyp', 'package.json', 'native', 'scripts']) {
    fs.cpSync(path.join(root, name), path.join(work, name), { recursive: true });
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'));
  fs.rmSync(out, { recursive: true, force: true });
  const dir = nodedir();
  const env = {
    ...process.env,
    PCHECKOUT_LIBDEFLATE: 'static',
    PCHECKOUT_PREBUILD: '1',
    PCHECKOUT_SANITIZE: '',
    ...(dir ? { npm_config_nodedir: dir } : {}),
  };
  const r = spawnSync(
    process.execPath,
    [
      require.resolve('prebuildify/bin.js'),
      '--napi',
      '--strip',
      '--tag-libc',
      `--target=${process.versions.node}`,
      `--cwd=${work}`,
      `--out=${root}`,
    ],
    { cwd: work, env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (r.status !== 0) fail(`prebuildify failed (exit status ${r.status})`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

// What it made: one file, which needs no libdeflate at run time and loads here.
const made = fs
  .readdirSync(out)
  .flatMap((d) => fs.readdirSync(path.join(out, d)).map((f) => path.join(out, d, f)));
if (made.length !== 1) fail(`expected one prebuild, found: ${made.join(', ') || 'none'}`);
const file = made[0];
const needed = spawnSync('readelf', ['-d', file], { encoding: 'utf8' });
if (needed.status === 0 && /NEEDED.*libdeflate/.test(needed.stdout)) {
  fail(`${file} needs libdeflate's shared library at run time`);
}
const probe = spawnSync(process.execPath, ['-p', 'require(process.argv[1]).inflater', file], {
  encoding: 'utf8',
});
if (probe.status !== 0) fail(`${file} does not load: ${probe.stderr}`);
process.stderr.write(
  `pcheckout prebuild: ${path.relative(root, file)} (${fs.statSync(file).size} bytes, inflater ${probe.stdout.trim()})\n`,
);
