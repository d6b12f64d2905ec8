#!/usr/bin/env node
// How the addon can link libdeflate on this machine. binding.gyp calls this at configure time:
//   (no argument)  "true" when libdeflate can be used at all, "false" otherwise (scripts/fuzz.sh)
//   --link         "static" when its static archive (Debian: libdeflate-dev's libdeflate.a) links
//                  into a shared object, so the addon needs no libdeflate at run time; else
//                  "shared" when -ldeflate links; else "none" (the addon inflates with zlib)
//   --archive      the static archive's path ("" when it is not usable)
// PCHECKOUT_INFLATE=zlib forces the zlib build; PCHECKOUT_LIBDEFLATE=static refuses the shared
// library (the prebuild, scripts/prebuild.cjs: a binary for machines without libdeflate).
'use strict';
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');

const CODE =
  '#include <libdeflate.h>\nextern "C" int pcheckout_probe(){libdeflate_free_decompressor(libdeflate_alloc_decompressor());return 0;}\nint main(){return pcheckout_probe();}\n';

function cxx() {
  const [cmd, ...flags] = (process.env.CXX || 'c++').trim().split(/\s+/);
  return { cmd, flags };
}

function links(args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-detect-'));
  try {
    const src = path.join(dir, 't.cc');
    fs.writeFileSync(src, CODE);
    const { cmd, flags } = cxx();
    const r = spawnSync(cmd, [...flags, src, '-o', path.join(dir, 't'), ...args], {
      stdio: 'ignore',
    });
    return r.status === 0;
  } catch {
    return false;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The static archive the compiler would find, when it links into a shared object. */
function archive() {
  const { cmd, flags } = cxx();
  const r = spawnSync(cmd, [...flags, '-print-file-name=libdeflate.a'], { encoding: 'utf8' });
  const file = r.status === 0 ? r.stdout.trim() : '';
  // An archive the compiler does not find comes back as the bare name.
  if (!path.isAbsolute(file) || !fs.existsSync(file)) return '';
  return links(['-shared', '-fPIC', file]) ? path.normalize(file) : '';
}

function link() {
  if (process.env.PCHECKOUT_INFLATE === 'zlib') return 'none';
  if (archive() !== '') return 'static';
  if (process.env.PCHECKOUT_LIBDEFLATE === 'static') return 'none';
  return links(['-ldeflate']) ? 'shared' : 'none';
}

const arg = process.argv[2];
if (arg === '--link') process.stdout.write(link());
else if (arg === '--archive')
  process.stdout.write(process.env.PCHECKOUT_INFLATE === 'zlib' ? '' : archive());
else process.stdout.write(link() === 'none' ? 'false' : 'true');
