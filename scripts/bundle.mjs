// Bundles the package's JavaScript into one file (dist/lib.cjs) with its entry points over it:
// the API for require() (dist/index.cjs) and import (dist/index.js, over tsc's output of that
// name), the CLI (dist/cli.cjs); and gathers the API's declarations for both module systems
// (dist/types/). These, not tsc's per-module output, are what the package ships (package.json
// "files"). Resolving and compiling ~40 ES modules costs a small checkout more than its work
// does (measured here: 75–105 ms to import dist/checkout.js module by module, 34 ms as one file).
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import ts from 'typescript';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Minified, names kept (a stack trace names its functions; `class.name` stays), and no source
  // maps (they were two thirds of the package): the tarball's JavaScript 90 -> 67 kB gzipped.
  // The per-module output of tsc (dist/**/*.js, with maps) is there to read and debug.
  minify: true,
  keepNames: true,
  legalComments: 'none',
  sourcemap: false,
  logLevel: 'warning',
};

// One bundle, CommonJS: dist/lib.cjs holds the API, the CLI and the orchestrator thread
// (src/lib.ts), so the package carries the code once, not once per entry point (four copies
// were most of the tarball). CommonJS because a one-shot process loads it through require(),
// without the ES module loader's resolve, translate and link steps, and Node's built-ins are
// not wrapped in ES facades (an ES import of `node:fs` or `node:crypto` reads every export, and
// so loads what sits behind their lazy getters: fs.promises, the streams, crypto.webcrypto).
// A 10-file checkout measured 55 ms over `node -e ''` as an ES module here, 35 ms as CommonJS.
// import.meta.url (the package root, the addon and the Worker's script are found from it) is
// the file's own URL.
await build({
  ...common,
  format: 'cjs',
  entryPoints: ['src/lib.ts'],
  outfile: 'dist/lib.cjs',
  define: { 'import.meta.url': '__pcheckoutUrl' },
  // Strict mode, as the ES modules it was written as, must be the banner's first statement.
  banner: {
    js: "'use strict';\nconst __pcheckoutUrl = require('node:url').pathToFileURL(__filename).href;",
  },
});

// The entry points over it: require('pcheckout') (dist/index.cjs), import 'pcheckout'
// (dist/index.js: an ES module with the API's names, one instance with the CommonJS one, so
// that `instanceof PcheckoutError` holds whichever way the caller loaded it).
const names = Object.keys(createRequire(import.meta.url)('../dist/lib.cjs').api).sort();
writeFileSync(
  'dist/index.cjs',
  "'use strict';\n// The API for require(): the bundle's (dist/lib.cjs, scripts/bundle.mjs).\nmodule.exports = require('./lib.cjs').api;\n",
);
writeFileSync(
  'dist/index.js',
  `// The API for import: the bundle's (dist/lib.cjs, scripts/bundle.mjs).\nimport lib from './lib.cjs';\n\nexport const { ${names.join(', ')} } = lib.api;\n`,
);

// The bin is a small loader that compiles the bundle with V8's code cache of it
// (scripts/cli-loader.cjs): 10-15 ms of every one-shot process.
copyFileSync('scripts/cli-loader.cjs', 'dist/cli.cjs');
for (const old of ['cli-main.cjs', 'cli-main.cache', 'call-worker.js', 'lib.cache']) {
  rmSync(join('dist', old), { force: true });
}

// The API's declarations, those dist/index.d.ts reaches and no others, in dist/types/, once:
// as .d.cts files whose relative imports name .cjs files (what a CommonJS consumer needs
// under module node16/nodenext, where a .d.ts in this "type": "module" package would be an ES
// module that require() cannot load), and an index.d.ts for ES module consumers that
// re-exports them (an ES module may import CommonJS; dist/index.js has exactly those names).
rmSync('dist/types', { recursive: true, force: true });
const DOCUMENTED = new Set([
  'index',
  'checkout',
  'engine',
  'errors',
  'settings',
  'run/summary',
  'run/changes',
  'index/racy',
  'plan/paths',
  'write/durability',
  'write/filesystem',
]);
function withoutComments(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  return ts.createPrinter({ removeComments: true }).printFile(source);
}
const seen = new Set();
const queue = ['dist/index.d.ts'];
const specifier = /(from\s*|import\(\s*)(['"])(\.{1,2}\/[^'"]+)\.js\2/g;
while (queue.length > 0) {
  const file = queue.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(specifier)) queue.push(join(dirname(file), `${m[3]}.d.ts`));
  const module = relative('dist', file).replace(/\.d\.ts$/, '');
  const out = join('dist/types', `${module}.d.cts`);
  mkdirSync(dirname(out), { recursive: true });
  // The API's own modules keep their doc comments (what an editor shows); the internal ones
  // the API's types reach (the planner's, the addon's, ...) are printed without: 13 kB less of
  // the packed tarball.
  const kept = DOCUMENTED.has(module) ? text : withoutComments(file, text);
  writeFileSync(
    out,
    kept.replace(specifier, (_, head, quote, path) => `${head}${quote}${path}.cjs${quote}`),
  );
}
writeFileSync(
  'dist/types/index.d.ts',
  "// The API's types for import (dist/index.js): those of require() (scripts/bundle.mjs).\nexport * from './index.cjs';\n",
);
