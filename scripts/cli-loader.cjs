#!/usr/bin/env node
'use strict';
// The CLI's entry: the package's bundle (lib.cjs, next to it) compiled with V8's code cache of
// it (lib.cache) when there is one that fits this Node, then its runCli. A one-shot process so
// neither parses the bundle nor compiles again the functions a checkout runs. Where there is
// none, or V8 rejects it (another Node, a rebuilt bundle), the bundle is compiled as require()
// would, and the cache is written at exit (atomically; where dist/ is read-only, never).
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { createRequire } = require('node:module');

const main = path.join(__dirname, 'lib.cjs');
const cacheFile = path.join(__dirname, 'lib.cache');
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const source = fs.readFileSync(main, 'utf8');
const script = new vm.Script(
  `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
  { filename: main, cachedData },
);
if (cachedData === undefined || script.cachedDataRejected) {
  process.once('exit', () => {
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  });
}
const mod = { exports: {}, filename: main, id: main, loaded: false };
script.runInThisContext()(mod.exports, createRequire(main), mod, main, __dirname);
mod.exports.runCli(process.argv.slice(2));
