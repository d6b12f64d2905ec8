// Memory of a checkout against its pack: the pages of a mapped pack count in the process's
// RSS, so the readers drop what they have read (MappedFile::touched) instead of keeping the
// whole pack resident. A pack of incompressible blobs several times that budget is checked
// out in a child process, whose peak RSS growth must stay well under the pack's size; a warm
// engine keeps none of the pack's pages between calls.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { assertMatchesGit } from '../helpers/compare.mjs';
import { Repo, cachedFixture, freshClone, gitEnv, randomBytes } from '../helpers/git.mjs';
import { DIST_INDEX } from '../helpers/run.mjs';

const BLOBS = 64;
const BLOB_SIZE = 2 << 20; // 128 MiB of pack, four times the 32 MiB release step

const CHILD = `
const { checkout, createEngine } = await import(process.env.PCHECKOUT_TEST_DIST);
const { repo, engine } = JSON.parse(process.env.PCHECKOUT_TEST_ARGS);
const status = () => {
  const out = {};
  for (const line of require('node:fs').readFileSync('/proc/self/status', 'utf8').split('\\n')) {
    const m = /^(VmHWM|VmRSS|RssAnon|RssFile|RssShmem):\\s+(\\d+) kB/.exec(line);
    if (m) out[m[1]] = Number(m[2]) * 1024;
  }
  return out;
};
const start = status();
let summary;
let after;
if (engine) {
  const e = createEngine({ workers: 2 });
  summary = await e.checkout(repo, { racyWait: false, threshold: 0 });
  after = status();
  await e.close();
} else {
  summary = await checkout(repo, { racyWait: false, workers: 2, threshold: 0 });
  after = status();
}
process.stdout.write('@@RESULT@@' + JSON.stringify({ start, after, pool: summary.pool }) + '\\n');
`;

function measure(dir, engine) {
  const r = spawnSync(
    process.execPath,
    ['--input-type=commonjs', '-e', `(async () => { ${CHILD} })()`],
    {
      env: {
        ...gitEnv,
        PCHECKOUT_TEST_DIST: DIST_INDEX,
        PCHECKOUT_TEST_ARGS: JSON.stringify({ repo: dir, engine }),
      },
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  const line = r.stdout.split('\n').find((l) => l.startsWith('@@RESULT@@'));
  assert.ok(line, `child: exit ${r.status}, stderr ${r.stderr}`);
  return JSON.parse(line.slice('@@RESULT@@'.length));
}

describe('memory: mapped pack pages are released as they are read', () => {
  let repo;
  let packBytes;
  before(() => {
    ({ repo } = cachedFixture('memory-pack', [BLOBS, BLOB_SIZE], () => {
      const r = Repo.init('memory');
      for (let i = 0; i < BLOBS; i++)
        r.write(`d${i % 8}/blob${i}.bin`, randomBytes(BLOB_SIZE, i + 1));
      r.write('small.txt', 'small\n');
      r.git('add', '-A');
      r.git('commit', '-q', '-m', 'blobs');
      // No delta search: random data has none, and the window would only cost time.
      r.git('repack', '-adq', '--window=0');
      return r;
    }));
    const packDir = path.join(repo.gitDir, 'objects', 'pack');
    const packs = fs.readdirSync(packDir).filter((n) => n.endsWith('.pack'));
    assert.equal(packs.length, 1);
    packBytes = fs.statSync(path.join(packDir, packs[0])).size;
    assert.ok(packBytes > BLOBS * BLOB_SIZE, `pack of ${packBytes} bytes`);
  });

  test('a fresh checkout: peak RSS grows by well under the pack', () => {
    const dir = freshClone(repo, { hardlinks: false });
    const m = measure(dir, false);
    assert.equal(m.pool.used, true);
    assertMatchesGit(dir, repo);
    const growth = m.after.VmHWM - m.start.VmRSS;
    console.log(
      `# peak RSS growth ${(growth / 2 ** 20).toFixed(0)} MiB, pack ${(packBytes / 2 ** 20).toFixed(0)} MiB`,
    );
    // Kept whole, the pack alone would add its full size (128 MiB) to the peak.
    assert.ok(
      growth < packBytes / 2,
      `peak RSS grew by ${(growth / 2 ** 20).toFixed(0)} MiB for a ${(packBytes / 2 ** 20).toFixed(0)} MiB pack`,
    );
  });

  test('a warm engine keeps none of the pack resident after a call', () => {
    const dir = freshClone(repo, { hardlinks: false });
    const m = measure(dir, true);
    assertMatchesGit(dir, repo);
    const fileBefore = m.start.RssFile + m.start.RssShmem;
    const fileAfter = m.after.RssFile + m.after.RssShmem;
    assert.ok(
      fileAfter - fileBefore < 48 << 20,
      `file-backed RSS after the call: +${((fileAfter - fileBefore) / 2 ** 20).toFixed(0)} MiB`,
    );
  });
});
