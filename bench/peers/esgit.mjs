// es-git peer (libgit2 through napi-rs, a prebuilt binary from its npm packages): a fresh
// checkout of HEAD into <dir> (a clone made with --no-checkout).
//   node peers/esgit.mjs <dir>
//   node peers/esgit.mjs --version    # es-git's version and the libgit2 built into it, as JSON
// checkoutHead({ force: true }) is libgit2's git_checkout_head with GIT_CHECKOUT_FORCE, what a
// clone uses; with no index on disk every entry is created, and the checkout writes the index
// (updateIndex defaults to true).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const [dir] = process.argv.slice(2);

/** One line: the error and its causes (napi-rs chains the reason each binary did not load). */
function describe(e) {
  const parts = [];
  for (let x = e; x && parts.length < 6; x = x.cause) {
    const line = String(x.message ?? x).split('\n')[0];
    if (!parts.includes(line)) parts.push(line);
  }
  return parts.join(' <- ').slice(0, 600);
}

async function load() {
  try {
    return await import('es-git');
  } catch (e) {
    // A binary built for a newer glibc, or none installed for this platform.
    console.error(`[peer-error] es-git cannot be loaded: ${describe(e)}`);
    process.exitCode = 3;
    return null;
  }
}

// No process.exit() anywhere: it could drop stderr still queued for the pipe.
if (dir === '--version') {
  if (await load()) printVersion();
} else if (!dir) {
  console.error('usage: node peers/esgit.mjs <dir> | --version');
  process.exitCode = 2;
} else {
  const esgit = await load();
  if (esgit) {
    try {
      const repo = await esgit.openRepository(dir);
      repo.checkoutHead({ force: true });
      if (!fs.existsSync(path.join(dir, '.git', 'index'))) throw new Error('no index written');
    } catch (e) {
      console.error(`[peer-error] es-git checkout failed: ${describe(e)}`); // marked for run.mjs
      process.exitCode = 1;
    }
  }
}

function printVersion() {
  const version = require('es-git/package.json').version;
  // The binary names the libgit2-sys crate it was built with ("libgit2-sys-0.18.1+1.9.0").
  let libgit2 = null;
  for (const p of ['es-git-linux-x64-gnu', 'es-git-linux-arm64-gnu']) {
    try {
      const pkg = path.dirname(require.resolve(`${p}/package.json`));
      const node = fs.readdirSync(pkg).find((f) => f.endsWith('.node'));
      const m = fs
        .readFileSync(path.join(pkg, node))
        .toString('latin1')
        .match(/libgit2-sys-[\d.]+\+([\d.]+)/);
      if (m) libgit2 = m[1];
      break;
    } catch {}
  }
  console.log(JSON.stringify({ esGit: version, libgit2 }));
}
