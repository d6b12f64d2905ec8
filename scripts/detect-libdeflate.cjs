#!/usr/bin/env node
// Prints "true" when libdeflate can be compiled and linked against, "false" otherwise.
// binding.gyp calls this at configure time; PCHECKOUT_INFLATE=zlib forces the zlib build.
'use strict';
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');

function detect() {
  if (process.env.PCHECKOUT_INFLATE === 'zlib') return false;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-detect-'));
  try {
    const src = path.join(dir, 't.cc');
    fs.writeFileSync(
      src,
      '#include <libdeflate.h>\nint main(){libdeflate_free_decompressor(libdeflate_alloc_decompressor());return 0;}\n',
    );
    const cxx = process.env.CXX || 'c++';
    const r = spawnSync(cxx, [src, '-o', path.join(dir, 't'), '-ldeflate'], { stdio: 'ignore' });
    return r.status === 0;
  } catch {
    return false;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

process.stdout.write(detect() ? 'true' : 'false');
