// Bundles the two entry points into one file each: the API (dist/index.js, over tsc's output of
// that name) and the CLI (dist/cli.cjs). Resolving and compiling ~40 ES modules costs a small
// checkout more than its work does (measured here: 75–105 ms to import dist/checkout.js module
// by module, 34 ms as one file); the other modules stay as tsc wrote them.
import { copyFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
};

// In the API (an ES module), Node's built-in modules are required, not imported: an ES import
// of `node:fs` or `node:crypto` builds an ES facade that reads every export, and so loads what
// sits behind their lazy getters (fs.promises, fs.ReadStream and the streams,
// crypto.webcrypto). Required through createRequire, each export is read only when used.
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    // The shim's own require() (and node:module, which the banner imports) stay external.
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.namespace === 'builtin' || args.path === 'node:module'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'builtin' },
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

await build({
  ...common,
  format: 'esm',
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  plugins: [builtinsByRequire],
  banner: {
    js: "import { createRequire as __pcheckoutRequire } from 'node:module';\nconst require = __pcheckoutRequire(import.meta.url);",
  },
});

// The orchestrator thread's module (src/call/worker.ts), beside the API's: a Worker loads it
// from dist/call-worker.js (src/call/threads.ts), as one file for the same reason.
await build({
  ...common,
  format: 'esm',
  entryPoints: ['src/call/worker.ts'],
  outfile: 'dist/call-worker.js',
  plugins: [builtinsByRequire],
  banner: {
    js: "import { createRequire as __pcheckoutRequire } from 'node:module';\nconst require = __pcheckoutRequire(import.meta.url);",
  },
});

// The CLI is CommonJS: a one-shot process loads it through require(), without the ES module
// loader's resolve, translate and link steps (and without the facades above). A 10-file
// checkout measured 55 ms over `node -e ''` as an ES module here, 35 ms as CommonJS.
// import.meta.url (the package root is found from it) is the file's own URL there too.
await build({
  ...common,
  format: 'cjs',
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli-main.cjs',
  define: { 'import.meta.url': '__pcheckoutUrl' },
  // The shebang of src/cli.ts is kept by esbuild, above the banner; strict mode, as the ES
  // modules it was written as, must be the banner's first statement to count.
  banner: {
    js: "'use strict';\nconst __pcheckoutUrl = require('node:url').pathToFileURL(__filename).href;",
  },
});

// The bin itself is a small loader that compiles the bundle with V8's code cache of it
// (scripts/cli-loader.cjs): 10-15 ms of every one-shot process.
copyFileSync('scripts/cli-loader.cjs', 'dist/cli.cjs');
rmSync('dist/cli-main.cache', { force: true });
