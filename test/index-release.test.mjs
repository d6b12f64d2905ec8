// An index file's mapping gives its pages back once parsed (releaseMapped): the bytes stay
// readable, and no other Buffer is ever touched by the advice (dropping an anonymous page
// would lose its bytes). The arrays parsed from it are let go by a switch once no later phase
// reads them (releaseArrays, run/open.ts releaseIndexRead), and the switch still equals git.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { loadAddon } from '../dist/addon.js';
import { readIndex } from '../dist/index/read.js';
import { STAT_WORDS, buildIndex } from '../dist/index/write.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { Repo, freshClone, git, gitOut } from './helpers/git.mjs';
import { entryList } from './helpers/lists.mjs';

test('a mapped index file is released and still reads the same; other Buffers are left alone', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-release-'));
  try {
    const n = 50_000;
    const names = Array.from({ length: n }, (_, i) => `d${String(i).padStart(6, '0')}/f`);
    const list = entryList(names);
    const stats = new Uint32Array(n * STAT_WORDS);
    for (let i = 0; i < n; i++) stats[i * STAT_WORDS + 6] = 0o100644;
    const file = path.join(dir, 'index');
    const bytes = buildIndex(list, stats);
    fs.writeFileSync(file, bytes);
    const addon = loadAddon();
    const mapped = addon.mapFile(file);
    const before = crypto.createHash('sha1').update(mapped.data).digest('hex');
    assert.equal(addon.releaseMapped(mapped.data), true);
    assert.equal(crypto.createHash('sha1').update(mapped.data).digest('hex'), before);
    assert.ok(mapped.data.equals(bytes));
    // Not a mapping of mapFile's (or only part of one): nothing done, nothing lost.
    const copy = Buffer.from(bytes);
    assert.equal(addon.releaseMapped(copy), false);
    assert.ok(copy.equals(bytes));
    assert.equal(addon.releaseMapped(mapped.data.subarray(0, 4096)), false);
    // readIndex releases its own mapping and reads every entry.
    const idx = readIndex(file);
    assert.equal(idx.entries.count, n);
    assert.equal(idx.entries.name(n - 1), names[n - 1]);
    assert.ok(idx.raw.equals(bytes));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('releaseArrays gives back buffers of 2 MiB or more at once and detaches them; smaller ones are left', () => {
  const addon = loadAddon();
  const anon = () =>
    Number(/RssAnon:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'latin1'))[1]) * 1024;
  const big = addon.newStats(400_000); // 16 MB (ten words an entry), the addon's huge pages
  big.fill(7);
  const own = new Uint32Array(1_000_000).fill(3); // 4 MB of V8's own
  const small = new Uint32Array(1000).fill(5);
  const pooled = Buffer.from('pooled'); // shares node's pool with other Buffers
  const view = own.subarray(10, 20); // a view of a released buffer is released with it
  const before = anon();
  const released = addon.releaseArrays([big, view, small, pooled]);
  assert.equal(released, 16_000_000 + 4_000_000);
  assert.ok(before - anon() > 12 * 1024 * 1024, `RssAnon fell by ${(before - anon()) >> 20} MB`);
  assert.equal(big.length, 0);
  assert.equal(own.length, 0);
  assert.equal(view.length, 0);
  assert.equal(small.length, 1000);
  assert.equal(small[999], 5);
  assert.equal(pooled.toString(), 'pooled');
  // Released again (or released already): nothing more.
  assert.equal(addon.releaseArrays([big, own]), 0);
  assert.throws(() => addon.releaseArrays([{}]), /typed array/);
});

describe('a switch lets go of the index it read (arrays of 2 MiB and more)', () => {
  // 55,000 entries: the index's stat data (2.2 MB) and paths (2.6 MB) are released before the
  // write; a smaller index never is, so the everyday switch tests do not reach this.
  const FILES = 55_000;
  const name = (i) =>
    `directory-${String(Math.floor(i / 100)).padStart(4, '0')}/a-longer-name-${String(i).padStart(6, '0')}.txt`;
  let src;
  before(() => {
    src = Repo.init('let-go');
    const commit = (branch, from, lines) =>
      `commit refs/heads/${branch}\ncommitter C <c@example.com> 1700000000 +0000\n` +
      `data ${branch.length}\n${branch}\n${from ? `from refs/heads/${from}\n` : ''}${lines.join('')}`;
    const all = [];
    for (let i = 0; i < FILES; i++) all.push(`M 100644 :1 ${name(i)}\n`);
    const edits = [];
    for (let i = 0; i < FILES; i += 550) {
      const content = `changed ${i}\n`;
      edits.push(`M 100644 inline ${name(i)}\ndata ${content.length}\n${content}\n`);
      edits.push(`D ${name(i + 1)}\n`);
      edits.push(`M 100755 inline new/${name(i)}\ndata ${content.length}\n${content}\n`);
    }
    const stream =
      'blob\nmark :1\ndata 5\nsame\n\n' + commit('main', null, all) + commit('next', 'main', edits);
    git(src.dir, ['fast-import', '--quiet'], { input: stream });
  });

  test('a clean switch equals git', async () => {
    const dir = freshClone(src);
    await checkout(dir, { racyWait: false });
    const summary = await checkout(dir, { ref: 'next', racyWait: false });
    assert.equal(summary.mode, 'switch');
    assert.equal(summary.updated, 100);
    assertMatchesGit(dir, src, { ref: 'next' });
  });

  test('a switch that keeps a modified file keeps its stat data and its entry, as git does', async () => {
    const dir = freshClone(src);
    await checkout(dir, { racyWait: false });
    const kept = name(5);
    fs.writeFileSync(path.join(dir, kept), 'edited\n');
    await checkout(dir, { ref: 'next', racyWait: false });
    const status = gitOut(dir, 'status', '--porcelain=v1', '--untracked-files=no');
    assert.equal(status, `M ${kept}`); // (trimmed: ' M')
    // Only the edited file is stat-dirty (before anything refreshes the index).
    assert.equal(gitOut(dir, 'diff-files', '--name-only'), kept);
    assert.equal(
      gitOut(dir, 'ls-files', '-s', '--', 'new'),
      gitOut(
        src.dir,
        'ls-tree',
        '-r',
        '--format=%(objectmode) %(objectname) 0\t%(path)',
        'next',
        '--',
        'new',
      ),
    );
  });
});
