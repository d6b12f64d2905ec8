// Symlinks in leading paths are never followed, in any mode. A directory of the worktree is
// replaced by a symlink to a directory outside it (absolute or relative) before a switch, a
// forced checkout (with and without a ref) or a restore: the result must be git's (twins), and
// nothing outside the worktree may change — the outside directory holds files with the very
// names the checkout writes. The same runs again with openat2 disabled
// (PCHECKOUT_NO_OPENAT2=1, in a child process): the component-by-component fallback must give
// the same protection. A tree that itself lists a symlink and a directory of one name is
// refused before anything is written (fresh checkout).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { Repo, tmpDir } from './helpers/git.mjs';
import { checkoutInChild, describeChild } from './helpers/run.mjs';
import { compareWithGit, WORKER_MATRIX } from './helpers/twin.mjs';
import {
  objectStore,
  rawRepo,
  snapshotAll,
  snapshotDiff,
  writeCommit,
  writeLoose,
  writeTree,
} from './helpers/raw.mjs';

/**
 * A: d/x, d/keep, e/f/y, top.txt. B: d/x and e/f/y changed, d/new and e/f/z added.
 * C: only d/x and e/f/y changed.
 */
function buildRepo() {
  const r = Repo.init('symlinks');
  r.write('d/x', 'x in A\n');
  r.write('d/keep', 'keep\n');
  r.write('e/f/y', 'y in A\n');
  r.write('top.txt', 'top\n');
  r.commit('A');
  r.branch('A');
  r.write('d/x', 'x in B\n');
  r.write('d/new', 'new in B\n');
  r.write('e/f/y', 'y in B\n');
  r.write('e/f/z', 'z in B\n');
  r.commit('B');
  r.branch('B');
  r.branch('C', 'A');
  r.switchTo('C');
  r.write('d/x', 'x in C\n');
  r.write('e/f/y', 'y in C\n');
  r.commit('C');
  return r;
}

/**
 * A directory outside the twin; `populated`: holding files named like the ones the checkout
 * writes (git's dirty check of a switch reads them through the link; pcheckout's never does).
 */
function outsideDir(populated) {
  const dir = tmpDir('outside');
  fs.writeFileSync(path.join(dir, 'canary'), 'canary\n');
  if (!populated) return dir;
  for (const name of ['x', 'keep', 'new', 'y', 'z']) {
    fs.writeFileSync(path.join(dir, name), `outside ${name}\n`);
  }
  return dir;
}

const outsides = new Map(); // twin dir -> { dir, snapshot }

/** Replaces worktree directory `rel` with a symlink to a fresh outside directory. */
const linkOut =
  (rel, { relative = false, populated = true } = {}) =>
  (twin) => {
    const out = outsideDir(populated);
    fs.rmSync(path.join(twin, rel), { recursive: true, force: true });
    const at = path.join(twin, rel);
    fs.symlinkSync(relative ? path.relative(path.dirname(at), out) : out, at);
    outsides.set(twin, { dir: out, snapshot: snapshotAll(out) });
  };

function assertOutsideUntouched(twin, who) {
  const o = outsides.get(twin);
  assert.ok(o, 'no outside directory recorded');
  assert.deepEqual(snapshotDiff(o.snapshot, snapshotAll(o.dir)), [], `${who} wrote through a link`);
}

const OPS = [
  // git refuses: the link is an untracked file in the way of the new files.
  { label: 'switch A → B', at: 'A', op: { ref: 'B' }, expect: 'ERR_WOULD_OVERWRITE' },
  // Only changed files under the links: git replaces each link with a real directory.
  { label: 'switch A → C', at: 'A', op: { ref: 'C' } },
  { label: 'forced checkout A → B', at: 'A', op: { ref: 'B', force: true } },
  { label: 'forced checkout of HEAD (git checkout -f)', at: 'A', op: { force: true } },
  { label: 'restore (checkout-index -a -f)', at: 'A', op: { restore: true } },
];

const mutations = (populated) => [
  { label: 'd -> /abs/outside', mutate: linkOut('d', { populated }) },
  {
    label: 'e/f -> ../../outside (relative)',
    mutate: linkOut('e/f', { relative: true, populated }),
  },
  {
    label: 'd and e -> outside',
    mutate: (t) => {
      linkOut('d', { populated })(t);
      const first = outsides.get(t);
      linkOut('e', { populated })(t);
      const second = outsides.get(t);
      outsides.set(t, {
        dir: path.dirname(first.dir),
        snapshot: null,
        both: [first, second],
      });
    },
  },
];

function assertOutsides(twin, who) {
  const o = outsides.get(twin);
  if (o?.both) {
    for (const one of o.both) {
      assert.deepEqual(
        snapshotDiff(one.snapshot, snapshotAll(one.dir)),
        [],
        `${who} wrote through a link`,
      );
    }
    return;
  }
  assertOutsideUntouched(twin, who);
}

describe('symlinked leading directories, compared with git', () => {
  let src;
  before(() => {
    src = buildRepo();
  });
  for (const { label, at, op, expect = 'success' } of OPS) {
    // A switch reads through the link in git (see outsideDir): an empty outside keeps the
    // comparison exact; the populated case is tested on its own below.
    for (const m of mutations(!op.ref || op.force === true)) {
      for (const w of [WORKER_MATRIX[0], WORKER_MATRIX[WORKER_MATRIX.length - 1]]) {
        test(`${label}, ${m.label}, workers ${w.workers} threshold ${w.threshold}`, async () => {
          const full = { ...op, ...w };
          const { twins } = await compareWithGit(src, {
            at,
            mutate: m.mutate,
            op: full,
            run: (dir) => checkout(dir, { ...full, racyWait: false }),
            expect,
          });
          assertOutsides(twins.git, 'git');
          assertOutsides(twins.pc, 'pcheckout');
        });
      }
    }
  }
});

describe('a switch never reads or writes through the link', () => {
  test('switch A → B with d -> an outside directory holding x, keep, new', async () => {
    const src = buildRepo();
    const { twins } = await makeTwinsWith(src, linkOut('d'));
    const err = await checkout(twins.pc, { ref: 'B', racyWait: false }).then(
      () => assert.fail('the switch went through'),
      (e) => e,
    );
    assert.equal(err.code, 'ERR_WOULD_OVERWRITE');
    // git also lists d/x as a local change: its dirty check lstats d/x through the link and
    // finds outside/x. pcheckout's never looks through a symlinked leading directory.
    assert.deepEqual(err.paths, ['d']);
    assertOutsides(twins.pc, 'pcheckout');
  });
});

async function makeTwinsWith(src, mutate) {
  const { makeTwins } = await import('./helpers/twin.mjs');
  return { twins: await makeTwins(src, { at: 'A', mutate }) };
}

describe('without openat2 (PCHECKOUT_NO_OPENAT2=1): the fallback refuses links too', () => {
  let src;
  before(() => {
    src = buildRepo();
  });
  for (const { label, at, op } of OPS.filter((o) => o.op.force || o.op.restore)) {
    test(`${label}, d -> /abs/outside`, async () => {
      const full = { ...op, workers: 2, threshold: 0, racyWait: false };
      await compareWithGit(src, {
        at,
        mutate: linkOut('d'),
        op: full,
        run: async (dir) => {
          const r = checkoutInChild(dir, full, { env: { PCHECKOUT_NO_OPENAT2: '1' } });
          assert.ok(r.result, describeChild(r));
          if (!r.result.ok) throw Object.assign(new Error(r.result.error.message), r.result.error);
          assert.equal(r.result.summary.openat2, false, 'summary.openat2 with openat2 disabled');
          return r.result.summary;
        },
      });
    });
  }
});

describe('a tree listing a symlink and a directory of one name (fresh checkout)', () => {
  test('symlink a -> ../outside, a-b, a/x: refused, nothing written', async () => {
    const store = objectStore('sym-objects');
    const blob = writeLoose(store, 'blob', 'pwned\n');
    const target = writeLoose(store, 'blob', '../outside');
    const inner = writeTree(store, [['file', 'canary', blob]]);
    const tree = writeTree(
      store,
      [
        ['symlink', 'a', target],
        ['file', 'a-b', blob],
        ['dir', 'a', inner],
      ],
      { sorted: false },
    );
    for (const opts of [
      { workers: 1, threshold: 0 },
      { workers: 2, threshold: 0 },
    ]) {
      const r = rawRepo(store, writeCommit(store, tree));
      const snap = snapshotAll(r.box);
      await assert.rejects(checkout(r.dir, { ...opts, racyWait: false }), {
        code: 'ERR_CORRUPT_OBJECT',
      });
      assert.deepEqual(snapshotDiff(snap, snapshotAll(r.box)), []);
    }
  });
});

// The writer itself, below the planner: told to write (or replace) files under a symlinked
// leading directory, it must refuse each one (a collision), with openat2 and without.
const NATIVE_CHILD = `
const { loadAddon } = await import(process.env.DIST_ADDON);
const { root, objects, oid } = JSON.parse(process.env.ARGS);
const a = loadAddon();
const odb = new a.Odb([objects], 0);
const paths = Buffer.from('d/x\\0d/new\\0e/f/y\\0e/f/g/deep\\0', 'latin1');
const oids = Buffer.concat(Array(4).fill(Buffer.from(oid, 'hex')));
const req = { root, paths, oids, modes: new Uint32Array(4).fill(0o100644),
  sizes: new Float64Array(4), streamThreshold: 1e9 };
const plain = odb.writeFiles(req);
const replace = odb.writeFiles({ ...req, flags: new Uint8Array(4).fill(1) });
const stat = a.statFiles({ root, paths });
process.stdout.write(JSON.stringify({ openat2: a.openat2, plain: [...plain.status],
  replace: [...replace.status], stat: [...stat.status] }));
`;

describe('the native writer under a symlinked leading directory', () => {
  for (const noOpenat2 of [false, true]) {
    test(`writes and replacements refused${noOpenat2 ? ' (fallback without openat2)' : ''}`, () => {
      const store = objectStore('native-objects');
      const oid = writeLoose(store, 'blob', 'pwned\n');
      const root = tmpDir('native-root');
      const out = outsideDir(true);
      fs.mkdirSync(path.join(root, 'g'));
      fs.writeFileSync(path.join(out, 'y'), 'outside y\n');
      fs.symlinkSync(out, path.join(root, 'd'));
      fs.mkdirSync(path.join(root, 'e'));
      fs.symlinkSync(path.relative(path.join(root, 'e'), out), path.join(root, 'e', 'f'));
      fs.mkdirSync(path.join(out, 'g'));
      const before = snapshotAll(out);
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', NATIVE_CHILD], {
        env: {
          ...process.env,
          DIST_ADDON: new URL('../dist/addon.js', import.meta.url).href,
          ARGS: JSON.stringify({ root, objects: store, oid }),
          ...(noOpenat2 ? { PCHECKOUT_NO_OPENAT2: '1' } : {}),
        },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      const res = JSON.parse(r.stdout);
      if (noOpenat2) assert.equal(res.openat2, false);
      assert.deepEqual(res.plain, [1, 1, 1, 1], 'writes through a link were not refused');
      assert.deepEqual(res.replace, [1, 1, 1, 1], 'replacements through a link were not refused');
      assert.deepEqual(res.stat, [1, 1, 1, 1], 'lstat looked through a link');
      assert.deepEqual(snapshotDiff(before, snapshotAll(out)), []);
    });
  }
});
