// The summary's decode counters (summary.decoded) against the pack itself: on a history whose
// blobs sit at the end of delta chains, each delta base is decoded once per checkout — with one
// reader exactly the chains' union, with two threads the distinct bases still that union.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { checkout, createEngine } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { Repo, editLines, freshClone, git, packContents, prng, textLines } from './helpers/git.mjs';

const FILES = 40;
const COMMITS = 90;

/** FILES files edited a few at a time over COMMITS commits (one fast-import), deep chains. */
function buildHistory() {
  const repo = Repo.init('history');
  const rand = prng(11);
  const files = [];
  const stream = [];
  const blob = (i) => {
    const body = Buffer.from(files[i].join('\n'));
    stream.push(Buffer.from(`M 100644 inline d${i % 5}/f${i}.txt\ndata ${body.length}\n`), body);
    stream.push(Buffer.from('\n'));
  };
  for (let c = 0; c < COMMITS; c++) {
    stream.push(
      Buffer.from(`commit refs/heads/main\ncommitter A <a@example.com> ${1e9 + c * 60} +0000\n`),
      Buffer.from(`data 3\nc${c % 10}\n`),
    );
    if (c === 0) {
      for (let i = 0; i < FILES; i++) {
        files.push(textLines(rand, 60 + (i % 7) * 20));
        blob(i);
      }
      continue;
    }
    for (let k = 0; k < 4; k++) {
      const i = Math.floor(rand() * FILES);
      files[i] = editLines(files[i], rand, { changes: 3, drop: 1, add: 2 });
      blob(i);
    }
  }
  git(repo.dir, ['fast-import', '--quiet'], { input: Buffer.concat(stream) });
  git(repo.dir, ['reset', '-q', '--hard', 'main']);
  repo.git('repack', '-adfq', '--depth=50', '--window=250');
  return repo;
}

/**
 * What decoding `commit` (once), each of its trees (once) and each path's blob must cost with
 * a cache that never evicts: a base is every member of a read object's chain but the object
 * itself; each base once, each delta object read once per read.
 */
function expected(repo, commit) {
  const packs = packContents(repo.dir);
  assert.equal(packs.length, 1, 'one pack');
  const { objects } = packs[0];
  const byOffset = new Map([...objects].map(([id, e]) => [e.offset, id]));
  const isDelta = (id) => objects.get(id).type === 6 || objects.get(id).type === 7;
  const baseOf = (id) => {
    const e = objects.get(id);
    return e.type === 6 ? byOffset.get(e.baseOffset) : e.baseId;
  };
  const listing = git(repo.dir, ['ls-tree', '-r', '-t', '-z', commit])
    .split('\0')
    .filter(Boolean)
    .map((line) => /^\d+ (\w+) ([0-9a-f]{40})\t/.exec(line).slice(1));
  const blobs = listing.filter(([type]) => type === 'blob').map(([, id]) => id);
  const trees = listing.filter(([type]) => type === 'tree').map(([, id]) => id);
  const reads = [
    commit,
    git(repo.dir, ['rev-parse', `${commit}^{tree}`]).trim(),
    ...trees,
    ...blobs,
  ];
  const bases = new Set();
  let deltas = 0;
  for (const id of reads) {
    if (isDelta(id)) deltas++;
    for (let b = isDelta(id) ? baseOf(id) : undefined; b !== undefined;) {
      bases.add(b);
      b = isDelta(b) ? baseOf(b) : undefined;
    }
  }
  for (const b of bases) if (isDelta(b)) deltas++;
  const blobDeltas = blobs.filter(isDelta).length;
  return { bases: bases.size, deltas, blobDeltas };
}

describe('decode counters', () => {
  let repo;
  let commit;
  let want;
  before(() => {
    repo = buildHistory();
    commit = repo.rev('HEAD~80');
    want = expected(repo, commit);
  });

  test('an old commit: its blobs are deltas, their chains deep', () => {
    assert.ok(want.blobDeltas > FILES / 2, `blobs stored as deltas: ${want.blobDeltas}`);
    assert.ok(want.bases > FILES, `bases in the chains: ${want.bases}`);
  });

  test('one reader: every base decoded exactly once, each delta applied once', async () => {
    const dir = freshClone(repo);
    const s = await checkout(dir, { ref: commit, workers: 1, racyWait: false });
    assertMatchesGit(dir, repo, { ref: commit });
    assert.equal(s.decoded.complete, true);
    assert.equal(s.decoded.repeatedBaseDecodes, 0, 'no base decoded twice');
    assert.equal(s.decoded.repeatedBaseBytes, 0);
    assert.equal(s.decoded.baseDecodes, want.bases, 'bases decoded = the chains’ union');
    assert.equal(s.decoded.deltas, want.deltas, 'delta applications');
    assert.ok(s.decoded.inflations >= s.decoded.deltas + 1 + FILES - want.blobDeltas);
  });

  test('two threads: the distinct bases are still the chains’ union; repeats counted', async () => {
    const dir = freshClone(repo);
    const s = await checkout(dir, { ref: commit, workers: 2, threshold: 0, racyWait: false });
    assertMatchesGit(dir, repo, { ref: commit });
    assert.equal(s.pool.used, true);
    const d = s.decoded;
    assert.equal(d.baseDecodes - d.repeatedBaseDecodes, want.bases, 'distinct bases');
    // A repeated base that is itself a delta costs one more application; a chain's root, one
    // more inflation.
    assert.ok(d.deltas >= want.deltas && d.deltas <= want.deltas + d.repeatedBaseDecodes, 'deltas');
    console.log(
      `# two threads: ${d.baseDecodes} base decodes for ${want.bases} bases ` +
        `(${d.repeatedBaseDecodes} repeated, ${d.repeatedBaseBytes} bytes)`,
    );
  });

  test('a warm engine: each checkout counts only its own decoding', async () => {
    const engine = createEngine({ workers: 1 });
    try {
      for (let i = 0; i < 2; i++) {
        const dir = freshClone(repo);
        const s = await engine.checkout(dir, { ref: commit, racyWait: false });
        assert.equal(s.decoded.baseDecodes, want.bases, `call ${i + 1}: bases`);
        assert.equal(s.decoded.deltas, want.deltas, `call ${i + 1}: deltas`);
      }
    } finally {
      await engine.close();
    }
  });
});
