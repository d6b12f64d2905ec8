// How fast can the blobs of a tree be inflated? Compares the addon built with libdeflate, the
// addon built with zlib, Node's zlib.inflateSync and pako on the same blobs, one thread each.
//
//   node inflate.mjs [--repo <git dir or worktree>] [--ref HEAD] [--limit N]
//
// The addon's figures include delta resolution (as in a checkout); the JS figures inflate the
// same blobs' content recompressed as zlib streams at level 6 (what git writes), so the
// decoders are compared on identical input.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, rmSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: {
    repo: { type: 'string', default: '/var/tmp/pcheckout-bench/linux/source.git' },
    ref: { type: 'string', default: 'HEAD' },
    limit: { type: 'string', default: '0' },
  },
});

const gitDir = existsSync(join(values.repo, '.git')) ? join(values.repo, '.git') : values.repo;
const objects = join(gitDir, 'objects');
const ls = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', values.ref], {
  maxBuffer: 1 << 28,
})
  .toString('latin1')
  .split('\0')
  .filter((l) => l.startsWith('100'))
  .map((l) => Buffer.from(l.split(' ')[2].slice(0, 40), 'hex'));
const limit = Number(values.limit) || ls.length;
const oids = ls.slice(0, limit);

function buildAddon(kind) {
  if (kind === 'libdeflate') return join(root, 'build', 'Release', 'pcheckout.node');
  const work = mkdtempSync(join(tmpdir(), 'pcheckout-zlib-'));
  cpSync(join(root, 'binding.gyp'), join(work, 'binding.gyp'));
  cpSync(join(root, 'native'), join(work, 'native'), { recursive: true });
  cpSync(join(root, 'scripts'), join(work, 'scripts'), { recursive: true });
  execFileSync('ln', ['-s', join(root, 'node_modules'), join(work, 'node_modules')]);
  const nodedir = execFileSync('npm', ['config', 'get', 'nodedir']).toString().trim();
  execFileSync(
    join(root, 'node_modules', '.bin', 'node-gyp'),
    ['rebuild', `--nodedir=${nodedir}`],
    {
      cwd: work,
      env: { ...process.env, PCHECKOUT_INFLATE: 'zlib' },
      stdio: 'ignore',
    },
  );
  process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  return join(work, 'build', 'Release', 'pcheckout.node');
}

function timeAddon(kind) {
  const addon = require(buildAddon(kind));
  if (addon.inflater !== kind) throw new Error(`wanted a ${kind} build, got ${addon.inflater}`);
  const odb = new addon.Odb([objects], 48 << 20);
  const t = performance.now();
  let bytes = 0;
  for (const oid of oids) bytes += odb.read(oid).data.length;
  const ms = performance.now() - t;
  odb.close();
  return { ms, bytes };
}

const results = [];
const lib = timeAddon('libdeflate');
results.push({ name: 'addon, libdeflate (with deltas)', ...lib });
results.push({ name: 'addon, zlib (with deltas)', ...timeAddon('zlib') });

// The same content as zlib streams, for the JavaScript decoders.
const addon = require(join(root, 'build', 'Release', 'pcheckout.node'));
const odb = new addon.Odb([objects], 48 << 20);
const streams = oids.map((oid) => zlib.deflateSync(odb.read(oid).data, { level: 6 }));
odb.close();
let t = performance.now();
let bytes = 0;
for (const s of streams) bytes += zlib.inflateSync(s).length;
results.push({ name: 'node zlib.inflateSync', ms: performance.now() - t, bytes });
let pako;
try {
  pako = (await import('pako')).default;
} catch {
  console.error('pako is not installed here (cd bench && npm install)');
}
if (pako) {
  t = performance.now();
  bytes = 0;
  for (const s of streams) bytes += pako.inflate(s).length;
  results.push({ name: 'pako.inflate', ms: performance.now() - t, bytes });
}
console.log(`${oids.length} blobs, ${(lib.bytes / 1e6).toFixed(0)} MB inflated`);
for (const r of results) {
  const mbs = r.bytes / 1e6 / (r.ms / 1000);
  const ratio = r.ms / results[0].ms;
  console.log(
    `${r.name.padEnd(34)} ${(r.ms / 1000).toFixed(2).padStart(6)} s  ${mbs.toFixed(0).padStart(5)} MB/s  ${ratio.toFixed(2)}x`,
  );
}
