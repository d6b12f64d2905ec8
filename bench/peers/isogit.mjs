// isomorphic-git peer: a fresh checkout of <ref> into <dir> (a clone made with --no-checkout).
//   node peers/isogit.mjs <dir> <ref> [--batched]
// --batched adds { nonBlocking: true, batchSize: 100 }: files are written 100 at a time instead of
// all at once (the default opens every file concurrently, which runs out of descriptors on a large
// tree).
import fs from 'node:fs';
import git from 'isomorphic-git';

const [dir, ref, flag] = process.argv.slice(2);
if (!dir || !ref) {
  console.error('usage: node peers/isogit.mjs <dir> <ref> [--batched]');
  process.exit(2);
}
const extra = flag === '--batched' ? { nonBlocking: true, batchSize: 100 } : {};
try {
  await git.checkout({ fs, dir, ref, force: true, ...extra });
} catch (e) {
  // One line the harness can report (MultipleGitError carries thousands of inner errors).
  const inner = e?.data?.errors;
  let msg = `${e?.code || e?.name}: ${e?.message}`;
  if (Array.isArray(inner)) {
    const kinds = new Map();
    for (const x of inner) {
      const k = `${x?.code || x?.name}: ${String(x?.message).replace(/'[^']*'/g, "'…'")}`;
      kinds.set(k, (kinds.get(k) || 0) + 1);
    }
    msg =
      `${e.code}: ${inner.length} errors — ` + [...kinds].map(([k, n]) => `${n} × ${k}`).join('; ');
  }
  // Marked for run.mjs. No process.exit(): it would drop stderr still queued for the pipe.
  console.error(`[peer-error] isomorphic-git checkout failed: ${msg.slice(0, 500)}`);
  process.exitCode = 1;
}
