// git's path rules, compared with git itself: a generated table of names (each put in a tree
// next to harmless files, at the top, in a subdirectory, or as a directory holding a hook),
// each in its own raw repository. git (`git checkout main` into the same kind of repository)
// gives the verdict; pcheckout must refuse exactly the same trees with ERR_UNSAFE_PATH and write
// nothing anywhere (the whole sandbox — worktree, .git, the directory next to it — is
// snapshotted before and after), and check out the others exactly as git does. The exported
// verifyPath (the same native rules the tree walk applies) must give the same verdict.
// Set PCHECKOUT_PATH_TABLE=<file> to write the table with git's verdicts and ours.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { checkout, verifyPath } from '../dist/index.js';
import { fakeCommitId, gitTry, prng } from './helpers/git.mjs';
import {
  objectStore,
  rawRepo,
  snapshotAll,
  snapshotDiff,
  worktreeListing,
  writeCommit,
  writeLoose,
  writeRawIndex,
  writeTree,
} from './helpers/raw.mjs';

const store = objectStore('path-objects');
const blobA = writeLoose(store, 'blob', 'a\n');
const hook = writeLoose(store, 'blob', '#!/bin/sh\necho pwned > "$GIT_DIR/../../outside/pwned"\n');
const linkOut = writeLoose(store, 'blob', '../outside');
const treeZ = writeTree(store, [['file', 'b.txt', blobA]]);

const OPTS = { workers: 1, threshold: 0, racyWait: false };

/** The path of the hostile entry in the tree built for a case. */
function leafPath({ name, where }) {
  const n = Buffer.isBuffer(name) ? name : Buffer.from(name);
  if (where === 'nested') return Buffer.concat([Buffer.from('sub/'), n]);
  if (where === 'dir') return Buffer.concat([n, Buffer.from('/hooks/post-checkout')]);
  return n;
}

function leafId(kind) {
  if (kind === 'symlink') return linkOut;
  if (kind === 'gitlink') return fakeCommitId('path-safety');
  return hook;
}

/** A commit whose tree holds a.txt, z/b.txt and the case's entry. */
function buildCommit({ name, kind, where }) {
  const leaf = [kind, name, leafId(kind)];
  const top = [['file', 'a.txt', blobA]];
  if (where === 'nested') {
    top.push(['dir', 'sub', writeTree(store, [['file', 'ok.txt', blobA], leaf])]);
  } else if (where === 'dir') {
    const hooks = writeTree(store, [[kind, 'post-checkout', leafId(kind)]]);
    top.push(['dir', 'z', treeZ], ['dir', name, writeTree(store, [['dir', 'hooks', hooks]])]);
  } else {
    top.push(['dir', 'z', treeZ], leaf);
  }
  return writeCommit(store, writeTree(store, top));
}

const CONFIGS = {
  default: [],
  hfs: ['protectHFS = true'],
  'no-ntfs': ['protectNTFS = false'],
};

// ---------------------------------------------------------------------------------------------
// The table

const cases = [];
const add = (name, { kind = 'exec', where = ['top'], configs = ['default'], note } = {}) => {
  for (const w of [].concat(where))
    for (const config of [].concat(configs)) cases.push({ name, kind, where: w, config, note });
};
const EVERYWHERE = ['top', 'nested', 'dir'];

// .git itself, ".", ".."
for (const n of ['.git', '.GIT', '.Git', '.gIT']) add(n, { where: EVERYWHERE });
for (const n of ['.', '..']) add(n, { where: ['top', 'dir'] });
for (const n of ['...', '.a', '..git', '.gi', '.gitx', 'x.git', '. git', '.git~1']) add(n);
// NTFS: trailing dots and spaces, alternate data streams, the 8.3 short name, backslashes
for (const n of ['.git.', '.git..', '.git ', '.git  ', '.git. ', '.git .', '.git . .']) {
  add(n, { where: ['top', 'dir'], configs: ['default', 'no-ntfs'] });
}
for (const n of [
  '.git:',
  '.git::$INDEX_ALLOCATION',
  '.git:$DATA',
  '.git:x',
  '.GIT::$INDEX_ALLOCATION',
]) {
  add(n, { where: ['top', 'dir'], configs: ['default', 'no-ntfs'] });
}
for (let d = 0; d <= 9; d++)
  add(`git~${d}`, { configs: d === 1 ? ['default', 'no-ntfs'] : 'default' });
add('GIT~1', { where: EVERYWHERE, configs: ['default', 'no-ntfs'] });
for (const n of ['Git~1.', 'git~1 ', 'git~1:x', 'git~1x', 'git~11', 'gi~1', 'git~1\\x']) add(n);
for (const n of [
  'a\\.git',
  'a\\git~1',
  'a\\.GIT.',
  '.git\\x',
  'a\\b',
  '\\.git',
  'a\\\\.git',
  'a\\.gitx',
]) {
  add(n, { configs: ['default', 'no-ntfs'] });
}
// HFS+: ignorable code points anywhere in .git, others that are not ignored, malformed UTF-8
const IGNORABLE = [
  0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c,
  0x206d, 0x206e, 0x206f, 0xfeff,
];
for (const cp of IGNORABLE) add(`.gi${String.fromCodePoint(cp)}t`, { configs: ['default', 'hfs'] });
for (const n of [
  '\u200c.git',
  '.\u200cgit',
  '.git\u200c',
  '.G\u200cIT',
  '.\ufeffg\u200di\u202et\u206f',
]) {
  add(n, { where: ['top', 'dir'], configs: ['default', 'hfs'] });
}
for (const cp of [0x200b, 0x00ad, 0x2070, 0x2029, 0xfefe]) {
  add(`.gi${String.fromCodePoint(cp)}t`, { configs: ['default', 'hfs'] });
}
for (const bytes of [
  '.git\xff',
  '.git\xc0\x80',
  '.gi\xfft',
  '.git\xed\xa0\x80',
  '.git\xef\xbf\xbe',
  '.git\xf4\x90\x80\x80',
  '.git\xe0\x80\x80',
  '.git\xe2\x80',
]) {
  add(Buffer.from(bytes, 'latin1'), { configs: ['default', 'hfs'] });
}
// .gitmodules: refused as a symlink (every spelling), fine as a file
for (const n of [
  '.gitmodules',
  '.GITMODULES',
  '.gitmodules.',
  '.gitmodules ',
  '.gitmodules:x',
  '.gitmodules . .',
]) {
  add(n, { kind: 'symlink', configs: ['default', 'no-ntfs'] });
}
for (const n of [
  'gitmod~1',
  'GITMOD~4',
  'gitmod~5',
  'gitmod~0',
  'gi7eba~1',
  'GI7EBA~9',
  'gi7eb~12',
  'gi7e~123',
  'gi7eba~10',
  'gi7eb~1x',
  'gitmod~1 .',
  'gitmod~1:y',
  'a\\gitmod~1',
  'a\\.gitmodules',
]) {
  add(n, { kind: 'symlink', configs: ['default', 'no-ntfs'] });
}
for (const n of ['.gitmodulesx', 'x.gitmodules', '.gitmodule']) add(n, { kind: 'symlink' });
add('.gitmodules', { kind: 'symlink', where: ['nested', 'dir'] });
add('.gitmodules\u200c', { kind: 'symlink', configs: ['default', 'hfs'] });
add('.gitm\u200codules', { kind: 'symlink', where: ['top', 'dir'], configs: ['default', 'hfs'] });
for (const n of ['.gitmodules', 'gitmod~1', 'gi7eba~1', '.GITMODULES.'])
  add(n, { kind: 'file', where: ['top', 'dir'] });
// the other dotfiles git opens without following links: a symlink is fine on checkout in 2.39
for (const n of [
  '.gitattributes',
  '.gitignore',
  '.mailmap',
  '.GITIGNORE',
  '.gitattributes.',
  'gitatt~1',
  'gi7d29~1',
  'gitign~1',
  'gi250a~1',
  'mailma~1',
  'maba30~1',
]) {
  add(n, { kind: 'symlink' });
}
// gitlinks obey the same rules
for (const n of ['.git', 'git~1', 'sub-module']) add(n, { kind: 'gitlink' });
// the empty name and names with a slash (tree entries only)
add('', { note: 'git: fatal, empty filename in tree entry' });
add('/etc', { note: 'git: fatal' });
add('a/', { note: 'git: invalid path' });
add('a/b', {
  note: 'git 2.39 checks the entry out as the path a/b; pcheckout refuses a name with a slash',
});

const rows = [];

function describeCase(c) {
  const n = Buffer.isBuffer(c.name) ? c.name.toString('latin1') : c.name;
  return `${JSON.stringify(n)} ${c.kind} ${c.where} ${c.config}`;
}

/** What git does with the case: { refused, stderr, listing, index }. */
function gitVerdict(commit, c) {
  const r = rawRepo(store, commit, { prefix: 'git-path', core: CONFIGS[c.config] });
  const res = gitTry(r.dir, ['checkout', '-q', 'main']);
  const refused = res.status !== 0;
  const listing = worktreeListing(r.dir);
  if (refused) {
    assert.deepEqual(listing, [], `git refused ${describeCase(c)} but wrote ${listing}`);
    return { refused, stderr: res.stderr.trim().split('\n')[0] };
  }
  return { refused, listing, index: gitTry(r.dir, ['ls-files', '-s', '-z']).stdout };
}

describe('path rules: the table against git', () => {
  after(() => {
    const file = process.env.PCHECKOUT_PATH_TABLE;
    if (!file) return;
    const head =
      '| name | kind | where | config | git | pcheckout | verifyPath |\n| --- | --- | --- | --- | --- | --- | --- |\n';
    fs.writeFileSync(file, head + rows.map((r) => `| ${r.join(' | ')} |`).join('\n') + '\n');
  });

  for (const c of cases) {
    test(describeCase(c), async () => {
      const commit = buildCommit(c);
      const expected = gitVerdict(commit, c);
      const r = rawRepo(store, commit, { prefix: 'pc-path', core: CONFIGS[c.config] });
      const before = snapshotAll(r.box);
      let error = null;
      try {
        await checkout(r.dir, OPTS);
      } catch (err) {
        error = err;
      }
      const protect = {
        ntfs: c.config !== 'no-ntfs',
        hfs: c.config === 'hfs',
        mode: { exec: 0o100755, file: 0o100644, symlink: 0o120000, gitlink: 0o160000 }[c.kind],
      };
      const verdict = verifyPath(leafPath(c), protect);
      const shown = (Buffer.isBuffer(c.name) ? c.name.toString('latin1') : c.name)
        .replace(
          /[\u0000-\u001f\u007f-\uffff]/g,
          (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
        )
        .replace(/\|/g, '\\|');
      rows.push([
        `\`${shown}\``,
        c.kind,
        c.where,
        c.config,
        expected.refused ? `refuses (${expected.stderr})` : 'checks out',
        error ? `${error.code}` : 'checks out',
        verdict ? verdict.rule : 'ok',
      ]);
      const slashName =
        !Buffer.isBuffer(c.name) && c.name.length > 1 && c.name.slice(1).includes('/');
      if (slashName && !c.name.endsWith('/')) {
        // The one deliberate difference: a tree entry name holding a '/'.
        assert.equal(expected.refused, false, 'git now refuses a/b: make this case agree');
        assert.equal(error?.code, 'ERR_UNSAFE_PATH');
        assert.deepEqual(snapshotDiff(before, snapshotAll(r.box)), [], 'a refusal wrote');
        return;
      }
      if (expected.refused) {
        assert.ok(
          error,
          `git refuses ${describeCase(c)} (${expected.stderr}); pcheckout checked it out`,
        );
        assert.equal(error.code, 'ERR_UNSAFE_PATH', error.message);
        if (!Buffer.isBuffer(c.name) && c.name !== '' && !c.name.includes('/'))
          assert.equal(error.path, leafPath(c).toString(), 'err.path');
        assert.deepEqual(snapshotDiff(before, snapshotAll(r.box)), [], 'a refused checkout wrote');
        assert.ok(verdict, `verifyPath accepts ${describeCase(c)}`);
        return;
      }
      assert.equal(error, null, `git checks out ${describeCase(c)}; pcheckout: ${error?.message}`);
      assert.equal(verdict, null, `verifyPath refuses ${describeCase(c)}: ${verdict?.rule}`);
      assert.deepEqual(worktreeListing(r.dir), expected.listing);
      assert.equal(gitTry(r.dir, ['ls-files', '-s', '-z']).stdout, expected.index);
      const outside = (m) =>
        new Map([...m].filter(([k]) => !k.startsWith('repo/') && k !== 'repo'));
      assert.deepEqual(snapshotDiff(outside(before), outside(snapshotAll(r.box))), []);
    });
  }

  test('the table is large enough', () => {
    assert.ok(cases.length >= 150, `${cases.length} cases`);
    assert.ok(
      rows.filter((r) => r[4].startsWith('refuses')).length >= 30,
      'fewer than 30 hostile trees',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// verifyPath on its own: what only an index or a pathspec can hold

describe('verifyPath', () => {
  const table = [
    ['a\0b', 'nul'],
    ['', 'empty'],
    ['a//b', 'slash'],
    ['/a', 'slash'],
    ['a/', 'slash'],
    ['a/./b', 'dot'],
    ['a/../b', 'dotdot'],
    ['../outside', 'dotdot'],
    ['x/.git/config', 'dotgit'],
    ['x/.GiT', 'dotgit'],
    ['git~1/x', 'ntfs-dotgit'],
    ['a/b/c.txt', null],
    ['.gitignore', null],
  ];
  for (const [p, rule] of table) {
    test(`${JSON.stringify(p)}: ${rule ?? 'ok'}`, () => {
      assert.equal(verifyPath(p)?.rule ?? null, rule);
    });
  }
  test('options: NTFS and HFS protection, symlink mode', () => {
    assert.equal(verifyPath('git~1', { ntfs: false }), null);
    assert.equal(verifyPath('.gi\u200ct'), null);
    assert.equal(verifyPath('.gi\u200ct', { hfs: true })?.rule, 'hfs-dotgit');
    assert.equal(verifyPath('.gitmodules'), null);
    assert.equal(verifyPath('.gitmodules', { mode: 0o120000 })?.rule, 'symlink-gitmodules');
    assert.equal(verifyPath(Buffer.from('.git\xff', 'latin1'), { hfs: true })?.rule, 'hfs-dotgit');
    assert.match(verifyPath('.git').text, /\.git/);
  });
});

// ---------------------------------------------------------------------------------------------
// Names listed twice in one tree

describe('a name listed twice in one tree: refused (ERR_CORRUPT_OBJECT), nothing written', () => {
  const inner = writeTree(store, [['file', 'x', hook]]);
  const other = writeTree(store, [['file', 'y', blobA]]);
  // git 2.39 checks every one of these out (the last entry of a name wins, directories merge,
  // the tree is sorted on the way); fsck calls them duplicateEntries / treeNotSorted. pcheckout
  // refuses them rather than guess which entry was meant.
  const trees = {
    'file a, a-b, directory a': [
      ['file', 'a', blobA],
      ['file', 'a-b', blobA],
      ['dir', 'a', inner],
    ],
    'symlink a -> ../outside, a.b, a-c, directory a': [
      ['symlink', 'a', linkOut],
      ['file', 'a-c', blobA],
      ['file', 'a.b', blobA],
      ['dir', 'a', inner],
    ],
    'symlink a -> ../outside next to directory a': [
      ['symlink', 'a', linkOut],
      ['dir', 'a', inner],
    ],
    'nested: d/a, d/a-b, directory d/a': [
      [
        'dir',
        'd',
        writeTree(
          store,
          [
            ['file', 'a', blobA],
            ['file', 'a-b', blobA],
            ['dir', 'a', inner],
          ],
          { sorted: false },
        ),
      ],
    ],
    'two files a': [
      ['file', 'a', blobA],
      ['file', 'a', hook],
    ],
    'two directories a': [
      ['dir', 'a', inner],
      ['dir', 'a', other],
    ],
    'unsorted: b before a': [
      ['file', 'b', blobA],
      ['file', 'a', blobA],
    ],
  };
  for (const [label, entries] of Object.entries(trees)) {
    test(label, async () => {
      const commit = writeCommit(store, writeTree(store, entries, { sorted: false }));
      const g = rawRepo(store, commit, { prefix: 'git-dup' });
      assert.equal(gitTry(g.dir, ['checkout', '-q', 'main']).status, 0, 'git refuses it now');
      const r = rawRepo(store, commit, { prefix: 'pc-dup' });
      const before = snapshotAll(r.box);
      await assert.rejects(checkout(r.dir, OPTS), { code: 'ERR_CORRUPT_OBJECT' });
      assert.deepEqual(snapshotDiff(before, snapshotAll(r.box)), []);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Hostile targets of a switch or a forced checkout, hostile indexes

describe('hostile paths in a switch, a forced checkout and the index', () => {
  const good = writeCommit(
    store,
    writeTree(store, [
      ['file', 'a.txt', blobA],
      ['dir', 'z', treeZ],
    ]),
  );
  const evilNames = ['.git', '.GIT', 'git~1', '.git::$INDEX_ALLOCATION', '..', '.git. '];
  const evil = evilNames.map((name) => buildCommit({ name, kind: 'exec', where: 'dir' }));

  /** A raw repository at `good`, checked out (by git or pcheckout), with branch evil at `commit`. */
  async function checkedOut(commit, byGit) {
    const r = rawRepo(store, good, { prefix: byGit ? 'git-sw' : 'pc-sw' });
    fs.writeFileSync(path.join(r.gitDir, 'refs', 'heads', 'evil'), `${commit}\n`);
    if (byGit) assert.equal(gitTry(r.dir, ['checkout', '-q', 'main']).status, 0);
    else await checkout(r.dir, OPTS);
    return r;
  }

  evilNames.forEach((name, k) => {
    for (const force of [false, true]) {
      test(`${force ? 'forced checkout' : 'switch'} to a tree with ${JSON.stringify(name)}/hooks/post-checkout`, async () => {
        const g = await checkedOut(evil[k], true);
        const args = force ? ['checkout', '-q', '-f', 'evil'] : ['checkout', '-q', 'evil'];
        assert.notEqual(gitTry(g.dir, args).status, 0, 'git does not refuse');
        const r = await checkedOut(evil[k], false);
        const before = snapshotAll(r.box);
        await assert.rejects(checkout(r.dir, { ...OPTS, ref: 'evil', force }), {
          code: 'ERR_UNSAFE_PATH',
        });
        assert.deepEqual(snapshotDiff(before, snapshotAll(r.box)), []);
      });
    }
  });

  // git 2.39's checkout-index writes whatever the index names (.git/hooks included): an index
  // is trusted as git's own file. pcheckout holds it to the same rules as a tree.
  const hostileIndex = [
    [0o100755, '.git/hooks/post-checkout'],
    [0o100644, '../outside/pwned'],
    [0o100644, '.GIT/config'],
    [0o100644, 'git~1/config'],
    [0o120000, 'sub/.gitmodules'],
    [0o100644, 'a//b'],
    [0o100644, 'ok/./x'],
  ];
  for (const [mode, bad] of hostileIndex) {
    for (const how of ['restore', 'switch', 'force']) {
      test(`${how} with ${bad} (mode ${mode.toString(8)}) in the index`, async () => {
        const r = await checkedOut(good, false);
        const entries = [
          [0o100644, blobA, 'a.txt'],
          [mode, mode === 0o120000 ? linkOut : hook, bad],
          [0o100644, blobA, 'z/b.txt'],
        ].sort((x, y) => Buffer.compare(Buffer.from(x[2]), Buffer.from(y[2])));
        writeRawIndex(r.gitDir, entries);
        const before = snapshotAll(r.box);
        const opts = how === 'restore' ? { restore: true } : { force: how === 'force' };
        await assert.rejects(checkout(r.dir, { ...OPTS, ...opts }), (e) => {
          assert.equal(e.code, 'ERR_UNSAFE_PATH', e.message);
          assert.equal(e.path, bad);
          return true;
        });
        assert.deepEqual(snapshotDiff(before, snapshotAll(r.box)), []);
      });
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Random names against git's own predicates: `git fsck` runs is_ntfs_dotgit, is_hfs_dotgit and
// the .gitmodules spellings on every tree entry name (also after each backslash), always with
// both protections on. A tree per name and mode, one fsck over all of them: its hasDot,
// hasDotdot, hasDotgit and gitmodulesSymlink findings must be exactly the names verifyPath
// refuses with { ntfs: true, hfs: true } (one component, no '/').

describe('random names against git fsck', () => {
  test('4,000 names as files and as symlinks', () => {
    const rand = prng(20261201);
    const pieces = [
      '.',
      '.',
      'g',
      'i',
      't',
      'G',
      'I',
      'T',
      '~',
      '1',
      '2',
      '4',
      '5',
      '9',
      '0',
      ' ',
      ':',
      '\\',
      '\u200c',
      '\u200d',
      '\u202e',
      '\ufeff',
      '\u200b',
      'm',
      'o',
      'd',
      'u',
      'l',
      'e',
      's',
      'M',
      '7',
      'b',
      'a',
      'x',
      '$',
      '\xff',
      '\xc0',
      '\x80',
    ];
    const seeds = [
      '',
      '',
      '.',
      '.git',
      '.gIt',
      'git~',
      'GIT~1',
      '.gitmodules',
      'gitmod~',
      'gi7eba~',
      'gi7eb~',
      '.g\u200cit',
      '.gitm',
    ];
    const names = new Map(); // latin1 key -> Buffer
    while (names.size < 4000) {
      let s = seeds[Math.floor(rand() * seeds.length)];
      const extra = Math.floor(rand() * 5);
      for (let k = 0; k < extra; k++) s += pieces[Math.floor(rand() * pieces.length)];
      if (s === '') continue;
      // Code points above U+00FF as UTF-8; \xff, \xc0, \x80 stay single (malformed) bytes.
      const buf = Buffer.concat(
        [...s].map((ch) =>
          ch.codePointAt(0) > 0xff ? Buffer.from(ch, 'utf8') : Buffer.from(ch, 'latin1'),
        ),
      );
      names.set(buf.toString('latin1'), buf);
    }
    const fz = objectStore('fsck');
    const repo = path.join(fz, 'repo');
    fs.mkdirSync(repo);
    assert.equal(gitTry(repo, ['init', '-q']).status, 0);
    const objects = path.join(repo, '.git', 'objects');
    const blob = writeLoose(objects, 'blob', 'x');
    const trees = [];
    for (const buf of names.values()) {
      for (const kind of ['file', 'symlink']) {
        trees.push({ buf, kind, id: writeTree(objects, [[kind, buf, blob]]) });
      }
    }
    const out = gitTry(repo, ['fsck', '--no-dangling', '--no-progress']);
    const flagged = new Set();
    for (const line of out.stderr.split('\n').concat(out.stdout.split('\n'))) {
      const m =
        /^(?:warning|error) in tree ([0-9a-f]{40}): (hasDot|hasDotdot|hasDotgit|gitmodulesSymlink):/.exec(
          line,
        );
      if (m) flagged.add(m[1]);
    }
    const disagree = [];
    for (const t of trees) {
      const mode = t.kind === 'symlink' ? 0o120000 : 0o100644;
      const ours = verifyPath(t.buf, { ntfs: true, hfs: true, mode });
      if (Boolean(ours) !== flagged.has(t.id)) {
        disagree.push(
          `${JSON.stringify(t.buf.toString('latin1'))} ${t.kind}: fsck ${flagged.has(t.id) ? 'flags' : 'accepts'}, verifyPath ${ours?.rule ?? 'ok'}`,
        );
      }
    }
    assert.ok(flagged.size > 200, `only ${flagged.size} names flagged: the sample is too tame`);
    assert.deepEqual(disagree.slice(0, 20), [], `${disagree.length} disagreements`);
  });
});
