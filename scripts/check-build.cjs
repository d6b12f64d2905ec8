#!/usr/bin/env node
// Runs before node-gyp when the package is installed: checks that this machine can build the
// addon (Linux, a C++ compiler, make, python3 for node-gyp, the zlib headers) and, when it
// cannot, ends the install with one message that names everything missing and how to get it,
// instead of a page of compiler errors. libdeflate is optional (zlib is used without it): its
// absence is a note, not a failure.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const INSTALL = [
  'Debian/Ubuntu: apt-get install g++ make python3 zlib1g-dev libdeflate-dev',
  'Fedora/RHEL:   dnf install gcc-c++ make python3 zlib-devel libdeflate-devel',
  'Alpine:        apk add g++ make python3 zlib-dev libdeflate-dev',
];

function onPath(name) {
  if (name.includes('/')) return fs.existsSync(name);
  return (process.env.PATH || '')
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        fs.accessSync(path.join(dir, name), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** The compiler as make will run it: $CXX (a command and its flags), else c++, g++, clang++. */
function compiler() {
  const configured = (process.env.CXX || '').trim();
  if (configured) {
    const [cmd, ...flags] = configured.split(/\s+/);
    return onPath(cmd) ? { cmd, flags } : null;
  }
  const found = ['c++', 'g++', 'clang++'].find(onPath);
  return found ? { cmd: found, flags: [] } : null;
}

/** Whether `code` compiles (and, with libs, links) with the compiler. */
function builds(cxx, code, libs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-check-'));
  try {
    const src = path.join(dir, 't.cc');
    fs.writeFileSync(src, code);
    const args = [...cxx.flags, src, '-o', path.join(dir, 't'), ...libs];
    return spawnSync(cxx.cmd, args, { stdio: 'ignore' }).status === 0;
  } catch {
    return false;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function check() {
  if (process.platform !== 'linux') {
    return {
      missing: [],
      fatal: `pcheckout runs on Linux only (this is ${process.platform}): its native addon uses Linux system calls (openat2, syncfs).`,
    };
  }
  const missing = [];
  const cxx = compiler();
  if (!cxx) {
    missing.push(
      process.env.CXX ? `the C++ compiler CXX names (${process.env.CXX})` : 'a C++ compiler (g++ or clang++)',
    );
  }
  if (!onPath('make')) missing.push('make');
  const python = process.env.npm_config_python || process.env.PYTHON || 'python3';
  if (!onPath(python)) missing.push(`python3 (node-gyp runs it; looked for ${python})`);
  if (cxx && !builds(cxx, '#include <zlib.h>\nint main() { return zlibVersion() == 0; }\n', ['-lz'])) {
    missing.push('the zlib headers and library (zlib.h, -lz)');
  }
  const notes = [];
  if (
    cxx &&
    missing.length === 0 &&
    process.env.PCHECKOUT_INFLATE !== 'zlib' &&
    !builds(
      cxx,
      '#include <libdeflate.h>\nint main() { libdeflate_free_decompressor(libdeflate_alloc_decompressor()); return 0; }\n',
      ['-ldeflate'],
    )
  ) {
    notes.push(
      'pcheckout: note: libdeflate was not found (libdeflate.h, -ldeflate); building with zlib, whose inflate is about 2.6x slower. Install libdeflate-dev (Debian) / libdeflate-devel (Fedora) and run "npm rebuild pcheckout" for the faster build.',
    );
  }
  return { missing, notes };
}

const result = check();
if (result.fatal) {
  process.stderr.write(`pcheckout: cannot be installed here. ${result.fatal}\n`);
  process.exit(1);
}
if (result.missing.length > 0) {
  process.stderr.write(
    [
      `pcheckout: cannot build its native addon: missing ${result.missing.join(', ')}.`,
      'Install them, then run "npm rebuild pcheckout" (or install again):',
      ...INSTALL.map((line) => `  ${line}`),
      '',
    ].join('\n'),
  );
  process.exit(1);
}
for (const note of result.notes) process.stderr.write(`${note}\n`);
