// Bundles the two entry points (the CLI and the API) into one file each, over tsc's output of
// the same names. Resolving and compiling ~40 ES modules costs a small checkout more than its
// work does (measured here: 75–105 ms to import dist/checkout.js module by module, 34 ms as
// one file); the other modules stay as tsc wrote them.
import { build } from 'esbuild';

const shared = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
};

await build({ ...shared, entryPoints: ['src/index.ts'], outfile: 'dist/index.js' });
await build({
  ...shared,
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  // The shebang of src/cli.ts is kept by esbuild.
});
