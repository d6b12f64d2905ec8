// Content conversions (text / eol / crlf / core.autocrlf / core.eol, ident,
// working-tree-encoding) against git: the same repository checked out by git and by
// pcheckout, with workers 1 and 2 (threshold 0), must give the same bytes and an index git
// accepts; switches, forced checkouts and restores with conversions (and stat-dirty or racy
// files, hashed through the clean direction) must match git's in twins.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import {
  assertIndexStatMatchesDisk,
  assertMatchesGit,
  assertSameWorktree,
  gitOracle,
} from './helpers/compare.mjs';
import { Repo, freshClone, git } from './helpers/git.mjs';
import { compareWithGit } from './helpers/twin.mjs';

/**
 * A repository whose blobs hold exactly `files` (committed before any attribute could convert
 * them), then `attributes` as .gitattributes in a second commit. Packed.
 */
function repoWithBlobs(prefix, files, attributes) {
  const repo = Repo.init(prefix);
  for (const [name, content] of Object.entries(files)) repo.write(name, content);
  repo.commit('blobs');
  // Objects only: anything reading the index would apply the attributes (and may hash or
  // refuse files by them).
  const blob = git(repo.dir, ['hash-object', '-w', '--stdin'], { input: attributes }).trim();
  const listing = git(repo.dir, ['ls-tree', 'HEAD']);
  const tree = git(repo.dir, ['mktree'], {
    input: `${listing}100644 blob ${blob}\t.gitattributes\n`,
  }).trim();
  const commit = git(repo.dir, ['commit-tree', tree, '-p', 'HEAD', '-m', 'attributes']).trim();
  git(repo.dir, ['update-ref', 'HEAD', commit]);
  repo.gc();
  return repo;
}

/** A copy of `repo` with `config` set in its .git/config (a fresh copy per configuration). */
function withConfig(repo, config) {
  const copy = repo.copy('conv-config');
  for (const [k, v] of Object.entries(config)) git(copy.dir, ['config', k, v]);
  return copy;
}

/**
 * pcheckout in a fresh copy (config included) against git's checkout of a copy: same bytes,
 * same index entries, index stat data describing the files. With `full`, everything
 * assertMatchesGit checks too, `git status` clean included (git then hashes racy files
 * through its own clean direction).
 */
async function assertCheckoutLikeGit(src, opts, { full = false } = {}) {
  const dir = freshClone(src, { method: 'copy' });
  const summary = await checkout(dir, { racyWait: false, ...opts });
  if (full) {
    assertMatchesGit(dir, src, { method: 'copy' });
  } else {
    const oracle = gitOracle(src, { method: 'copy' });
    assertSameWorktree(dir, oracle);
    assert.equal(git(dir, ['ls-files', '-s', '-z']), oracle.lsFiles, 'git ls-files -s');
    assertIndexStatMatchesDisk(dir);
  }
  return { dir, summary };
}

const WORKERS = [{ workers: 1 }, { workers: 2, threshold: 0 }];

// Contents that survive a checkout and git's clean direction unchanged wherever they are.
const SAFE = {
  'lf.txt': 'one\ntwo\nthree\n',
  'noeol.txt': 'no newline at the end',
  'empty.txt': '',
  'nul.bin': 'a\0b\nc\n',
  'ctrl.bin': 'ab\x01\x02\x03\x04\n',
  'ctrlz.txt': 'dos\nend\n\x1a',
  'id.c': 'int x; /* $Id$ */\nchar *s = "$Id$";\n',
};
// Contents whose conversions git does not undo exactly (CRLF in a text blob, foreign ids).
const ODD = {
  'crlf.txt': 'one\r\ntwo\r\n',
  'mixed.txt': 'one\r\ntwo\nthree\r\n',
  'lonecr.txt': 'one\rtwo\n',
  'ids.c': [
    '$Id$',
    '$Id: old expansion $',
    '$Id: foreign id here $',
    '$$Id$',
    '$Id:x y$',
    '$Id:\tz $',
    '$Id: unterminated',
    '$',
    '$IdX$Id: q $',
    '$Id',
  ].join('\n'),
};
const SETTINGS = {
  text: 'text',
  notext: '-text',
  auto: 'text=auto',
  binary: 'binary',
  eollf: 'eol=lf',
  eolcrlf: 'eol=crlf',
  textcrlf: 'text eol=crlf',
  autocrlf: 'text=auto eol=crlf',
  autolf: 'text=auto eol=lf',
  crlf: 'crlf',
  nocrlf: '-crlf',
  crlfinput: 'crlf=input',
  bogus: 'text=bogus',
  ident: 'ident',
  identauto: 'ident text=auto',
  identcrlf: 'ident eol=crlf',
  identenc: 'ident working-tree-encoding=UTF-16',
  unspecified: '',
};
const ENCODINGS = {
  'u16.txt': ['UTF-16', 'héllo\nwörld\n'],
  'u16le.txt': ['UTF-16LE', 'héllo\n'],
  'u16lebom.txt': ['UTF-16LE-BOM', 'héllo\n'],
  'u16be.txt': ['UTF-16BE', 'héllo\n'],
  'utf16.txt': ['utf16', 'héllo\n'],
  'u32.txt': ['UTF-32', 'héllo\n'],
  'latin1.txt': ['ISO-8859-1', 'héllo wörld\n'],
  'latin-1.txt': ['latin-1', 'héllo\n'],
  'utf8.txt': ['utf8', 'héllo\n'],
  'nosuch.txt': ['NO-SUCH-ENCODING-42', 'héllo\n'],
  'u16crlf.txt': ['UTF-16 eol=crlf', 'a\nb\n'],
  'u16auto.txt': ['UTF-16 text=auto', 'a\nb\n'],
  'u16empty.txt': ['UTF-16', ''],
};

// Encodings whose checkout git does not undo: a character Latin-1 lacks (written as UTF-8 with
// git's complaint), and UTF-16BE-BOM (git cannot read it back).
const ODD_ENCODINGS = {
  'euro.txt': ['ISO-8859-1', 'price: 5 €\n'],
  'u16bebom.txt': ['UTF-16BE-BOM', 'héllo\n'],
};

function matrixRepo(prefix, contents, encodings) {
  const files = {};
  const lines = [];
  for (const [dir, attrs] of Object.entries(SETTINGS)) {
    if (attrs) lines.push(`${dir}/** ${attrs}`);
    for (const [name, content] of Object.entries(contents)) files[`${dir}/${name}`] = content;
  }
  for (const [name, [enc, content]] of Object.entries(encodings)) {
    files[`enc/${name}`] = content;
    lines.push(`enc/${name} working-tree-encoding=${enc}`);
  }
  return repoWithBlobs(prefix, files, `${lines.join('\n')}\n`);
}

const CONFIGS = [
  {},
  { 'core.autocrlf': 'true' },
  { 'core.autocrlf': 'input' },
  { 'core.eol': 'crlf' },
  { 'core.autocrlf': 'false', 'core.eol': 'lf' },
];

describe('conversions', () => {
  const safe = matrixRepo('conv-safe', SAFE, ENCODINGS);
  const odd = matrixRepo('conv-odd', ODD, ODD_ENCODINGS);

  for (const config of CONFIGS) {
    const name = JSON.stringify(config);
    test(`every attribute setting and encoding, config ${name}: git's bytes, status clean`, async () => {
      const src = withConfig(safe, config);
      // Both writers on the default config; the pool (where conversions run) on the others.
      for (const opts of Object.keys(config).length === 0 ? WORKERS : WORKERS.slice(1)) {
        const { summary } = await assertCheckoutLikeGit(src, opts, { full: true });
        // git's complaints, as git words them: the encodings iconv cannot do.
        assert.deepEqual(summary.warnings, [
          "failed to encode 'enc/nosuch.txt' from UTF-8 to NO-SUCH-ENCODING-42",
        ]);
      }
    });
  }

  test("contents git does not round-trip (CRLF blobs, odd $Id$ forms): git's bytes", async () => {
    for (const config of [{}, { 'core.autocrlf': 'true' }]) {
      const src = withConfig(odd, config);
      for (const opts of WORKERS) {
        const { summary } = await assertCheckoutLikeGit(src, opts);
        assert.deepEqual(summary.warnings, [
          "failed to encode 'enc/euro.txt' from UTF-8 to ISO-8859-1",
        ]);
      }
    }
  });

  test("git's parallel-checkout attribute cases, workers 1 and 2, threshold 0", async () => {
    // t2082: ident on one file and not the other; UTF-16 re-encoding; eol=crlf under
    // core.autocrlf=false.
    const repo = repoWithBlobs(
      'conv-pc',
      {
        'ident-yes': '$Id$\n',
        'ident-no': '$Id$\n',
        'utf16.txt': 'a utf-8 text with ü\n',
        'crlf.txt': 'line 1\nline 2\n',
        ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`plain-${i}`, `p${i}\n`])),
      },
      'ident-yes ident\nutf16.txt working-tree-encoding=UTF-16\ncrlf.txt eol=crlf\n',
    );
    const src = withConfig(repo, { 'core.autocrlf': 'false' });
    for (const opts of WORKERS) {
      const { dir, summary } = await assertCheckoutLikeGit(src, opts, { full: true });
      assert.equal(summary.pool.used, opts.workers > 1, 'the pool wrote the converted files');
      const id = git(dir, ['rev-parse', 'HEAD:ident-yes']).trim();
      assert.equal(fs.readFileSync(path.join(dir, 'ident-yes'), 'utf8'), `$Id: ${id} $\n`);
      assert.equal(fs.readFileSync(path.join(dir, 'ident-no'), 'utf8'), '$Id$\n');
      assert.equal(fs.readFileSync(path.join(dir, 'crlf.txt'), 'utf8'), 'line 1\r\nline 2\r\n');
    }
  });

  test('working-tree-encoding set without a value: refused as git dies, nothing written', async () => {
    const repo = repoWithBlobs(
      'conv-bad-enc',
      { 'a.txt': 'x\n', 'b.txt': 'y\n' },
      'b.txt working-tree-encoding\n',
    );
    const dir = freshClone(repo);
    await assert.rejects(checkout(dir, { racyWait: false }), (err) => {
      assert.ok(err instanceof PcheckoutError);
      assert.equal(err.code, 'ERR_BAD_ATTRIBUTE');
      assert.match(err.message, /true\/false are no valid working-tree-encodings/);
      return true;
    });
    assert.deepEqual(fs.readdirSync(dir), ['.git']);
    // Unset is no encoding at all for git.
    const unset = repoWithBlobs(
      'conv-unset-enc',
      { 'a.txt': 'x\n' },
      'a.txt -working-tree-encoding\n',
    );
    await assertCheckoutLikeGit(unset, {}, { full: true });
  });
});

/** History for switches: commits that add, change and drop conversions. */
function historyRepo() {
  const repo = Repo.init('conv-switch');
  const files = {
    'a.txt': 'alpha\nbeta\n',
    'b.txt': 'one\ntwo\n',
    'keep.txt': 'same on every commit\n',
    'id.c': '/* $Id$ */\n',
    'sub/u16.txt': 'héllo\n',
    'bin.dat': 'x\0y\n',
  };
  for (const [n, c] of Object.entries(files)) repo.write(n, c);
  repo.commit('plain');
  repo.branch('plain');
  // A side branch that changes a file in sub/ (which has no .gitattributes there).
  git(repo.dir, ['checkout', '-q', '-b', 'side']);
  repo.write('sub/u16.txt', 'side\n');
  repo.commit('side');
  git(repo.dir, ['checkout', '-q', 'main']);
  repo.write('.gitattributes', '*.txt eol=crlf\nid.c ident\n');
  git(repo.dir, ['add', '--', '.gitattributes']);
  git(repo.dir, ['commit', '-q', '-m', 'crlf']);
  repo.branch('crlf');
  repo.write('sub/.gitattributes', 'u16.txt working-tree-encoding=UTF-16\n');
  git(repo.dir, ['add', '--', 'sub/.gitattributes']);
  git(repo.dir, ['commit', '-q', '-m', 'utf16']);
  repo.branch('utf16');
  // Changed content under the same attributes (blobs written as they would be added).
  fs.writeFileSync(repo.abs('a.txt'), 'alpha\r\nbeta\r\ngamma\r\n');
  fs.writeFileSync(repo.abs('id.c'), '/* $Id$ */\nint changed;\n');
  git(repo.dir, ['add', '--', 'a.txt', 'id.c']);
  git(repo.dir, ['commit', '-q', '-m', 'changed']);
  repo.branch('changed');
  repo.gc();
  return repo;
}

/** Sets every regular file's mtime a few seconds back: stat-dirty, content unchanged. */
function touchAll(dir) {
  const past = new Date(Date.now() - 5000);
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      if (!rel && e.name === '.git') continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) fs.utimesSync(path.join(dir, r), past, past);
    }
  };
  walk('');
}

describe('conversions on switch, force and restore', () => {
  const repo = historyRepo();
  const run = (op) => (dir) => checkout(dir, { racyWait: false, ...op });

  test('switching to a commit that adds *.txt eol=crlf writes CRLF (attributes of the result)', async () => {
    for (const op of [{ ref: 'changed' }, { ref: 'changed', workers: 2, threshold: 0 }]) {
      const { twins } = await compareWithGit(repo, { at: 'plain', op, run: run(op) });
      // Written: CRLF by the new attributes; untouched (same blob): as it was, as with git.
      const read = (f) => fs.readFileSync(path.join(twins.pc, f), 'utf8');
      assert.equal(read('a.txt'), 'alpha\r\nbeta\r\ngamma\r\n');
      assert.equal(read('b.txt'), 'one\ntwo\n');
    }
    // (Not back again: files git does not rewrite keep their CRLF, which the old attributes
    // no longer explain; git itself then lists them as changed whenever they are racy.)
  });

  test('switch with converted files stat-dirty (hashed through the clean direction)', async () => {
    for (const config of [{}, { 'core.autocrlf': 'true' }]) {
      const src = withConfig(repo, config);
      for (const op of [{ ref: 'changed' }, { ref: 'crlf' }, { ref: 'plain' }]) {
        await compareWithGit(src, { at: 'utf16', mutate: touchAll, op, run: run(op) });
      }
    }
  });

  test('stat-dirty files under a worktree-only .gitattributes are hashed through it, as git', async () => {
    // sub/u16.txt, CRLF in the worktree by the top's eol=crlf, is no longer text by a
    // .gitattributes only the worktree has: its bytes no longer hash to the blob, so the
    // switch to side (which changes it) is refused; without that file it is clean and goes.
    const touched = (dir) => touchAll(dir);
    const notText = (dir) => {
      touchAll(dir);
      fs.writeFileSync(path.join(dir, 'sub', '.gitattributes'), '*.txt -text\n');
    };
    for (const op of [{ ref: 'side' }, { ref: 'side', workers: 2, threshold: 0 }]) {
      await compareWithGit(repo, { at: 'crlf', mutate: touched, op, run: run(op) });
      await compareWithGit(repo, {
        at: 'crlf',
        mutate: notText,
        op,
        run: run(op),
        expect: 'ERR_WOULD_OVERWRITE',
      });
    }
  });

  test('a real local change to a converted file is still refused', async () => {
    const op = { ref: 'changed' };
    await compareWithGit(repo, {
      at: 'utf16',
      mutate: (dir) => fs.appendFileSync(path.join(dir, 'a.txt'), 'local\r\n'),
      op,
      run: run(op),
      expect: 'ERR_WOULD_OVERWRITE',
    });
  });

  test('force and restore with converted files deleted, edited and racy', async () => {
    // (Files only touched are left out: git's checkout -f and checkout-index -f rewrite them,
    // pcheckout keeps them once their hash matches; same bytes, other inodes.)
    const mutate = (dir) => {
      fs.rmSync(path.join(dir, 'b.txt'));
      fs.rmSync(path.join(dir, 'sub/u16.txt'));
      fs.writeFileSync(path.join(dir, 'id.c'), 'edited\n');
    };
    for (const op of [
      { force: true },
      { restore: true },
      { restore: true, workers: 2, threshold: 0 },
      { force: true, ref: 'changed' },
    ]) {
      await compareWithGit(withConfig(repo, { 'core.autocrlf': 'true' }), {
        at: 'utf16',
        mutate,
        op,
        run: run(op),
      });
    }
  });

  test('restore reads the worktree .gitattributes first, as checkout-index does', async () => {
    const mutate = (dir) => {
      fs.writeFileSync(
        path.join(dir, '.gitattributes'),
        '*.txt eol=lf\nkeep.txt eol=crlf\nid.c ident\n',
      );
      fs.rmSync(path.join(dir, 'keep.txt'));
      fs.rmSync(path.join(dir, 'b.txt'));
    };
    const op = { restore: true };
    const { twins } = await compareWithGit(repo, { at: 'crlf', mutate, op, run: run(op) });
    // The modified .gitattributes is restored first; git reads it as restored.
    assert.equal(fs.readFileSync(path.join(twins.pc, 'b.txt'), 'utf8'), 'one\r\ntwo\r\n');
    // A restore of one path leaves it alone, and its eol=lf decides, as for git.
    const ours = freshClone(repo);
    const theirs = freshClone(repo);
    for (const dir of [ours, theirs]) {
      git(dir, ['checkout', '-q', 'crlf']);
      fs.writeFileSync(path.join(dir, '.gitattributes'), '*.txt eol=lf\n');
      fs.rmSync(path.join(dir, 'b.txt'));
    }
    git(theirs, ['checkout', '--', 'b.txt']);
    await checkout(ours, { paths: ['b.txt'], racyWait: false });
    const read = (d) => fs.readFileSync(path.join(d, 'b.txt'), 'utf8');
    assert.equal(read(ours), read(theirs));
    assert.equal(read(ours), 'one\ntwo\n');
  });

  test('switch honours an untracked .gitattributes where the result has none', async () => {
    const op = { ref: 'side' };
    const { twins } = await compareWithGit(repo, {
      at: 'plain',
      mutate: (dir) => fs.writeFileSync(path.join(dir, 'sub', '.gitattributes'), '* eol=crlf\n'),
      op,
      run: run(op),
    });
    assert.equal(fs.readFileSync(path.join(twins.pc, 'sub/u16.txt'), 'utf8'), 'side\r\n');
  });
});
