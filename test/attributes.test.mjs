// Attribute resolution against `git check-attr`: every path of a generated tree with nested
// .gitattributes files (macros, negation, `**`, directory patterns, quoting, refused lines),
// info/attributes and core.attributesFile, compared with `git check-attr --cached -a --stdin`
// after `git read-tree` (git 2.39 has no --source); warnings compared with git's stderr.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { Attributes } from '../dist/plan/attributes.js';
import { walkTree } from '../dist/plan/tree.js';
import { openRepo } from '../dist/repo/repo.js';
import { Repo, git, gitEnv, tmpDir } from './helpers/git.mjs';

/** git check-attr's answers for `paths`: Map(path -> Map(name -> value)), and its stderr. */
function gitAttributes(dir, paths, { cached = true, env = {} } = {}) {
  const r = spawnSync(
    'git',
    ['check-attr', ...(cached ? ['--cached'] : []), '-a', '-z', '--stdin'],
    {
      cwd: dir,
      input: Buffer.concat(paths.map((p) => Buffer.from(`${p}\0`, 'latin1'))),
      env: { ...gitEnv, ...env },
      maxBuffer: 1 << 28,
    },
  );
  assert.equal(r.status, 0, r.stderr.toString());
  const out = new Map(paths.map((p) => [p, new Map()]));
  const fields = r.stdout.toString('latin1').split('\0');
  for (let i = 0; i + 2 < fields.length; i += 3)
    out.get(fields[i]).set(fields[i + 1], fields[i + 2]);
  return { attrs: out, stderr: r.stderr.toString() };
}

/** pcheckout's answers, worded as check-attr words them (unspecified names left out). */
function ourAttributes(dir, paths, { list, worktree = null, direction = 'checkout', env } = {}) {
  const repo = openRepo(dir);
  const odb = new (loadAddon().Odb)(repo.objectDirs, 0);
  const warnings = [];
  try {
    const attributes = new Attributes(
      { repo, odb, list, worktree, direction, warn: (m) => warnings.push(m), env },
      'all',
    );
    const out = new Map();
    for (const p of paths) {
      const values = attributes.lookup(p);
      const names = attributes.resolvedNames;
      const m = new Map();
      values.forEach((v, i) => {
        if (v === undefined) return;
        m.set(names[i], v === true ? 'set' : v === false ? 'unset' : v);
      });
      out.set(p, m);
    }
    return { attrs: out, warnings };
  } finally {
    odb.close();
  }
}

function treeEntries(dir) {
  const repo = openRepo(dir);
  const odb = new (loadAddon().Odb)(repo.objectDirs, 0);
  try {
    const tree = spawnSync('git', ['rev-parse', 'HEAD^{tree}'], { cwd: dir, env: gitEnv })
      .stdout.toString()
      .trim();
    return walkTree(odb, tree, { ntfs: true, hfs: false });
  } finally {
    odb.close();
  }
}

function assertSameAttributes(ours, git, what) {
  const problems = [];
  for (const [p, expected] of git) {
    const actual = ours.get(p);
    const a = JSON.stringify([...actual].sort());
    const e = JSON.stringify([...expected].sort());
    if (a !== e) problems.push(`${p}: pcheckout ${a}\n      git ${e}`);
  }
  assert.equal(problems.length, 0, `${what}:\n  ${problems.slice(0, 20).join('\n  ')}`);
}

/** git's warnings as lines without the "warning: " prefix, deduplicated and sorted. */
const warningSet = (lines) =>
  [...new Set(lines.map((l) => l.replace(/^warning: /, '')).filter(Boolean))].sort();

const TOP = [
  '# macros and rules at the top',
  '[attr]mytext text eol=crlf',
  '[attr]nested mytext -ident',
  '[attr]bad@name text',
  '*.txt text',
  '*.bin binary',
  '*.both text binary',
  '*.both2 binary text',
  'doc/** ident',
  '/top.c filter=foo',
  'a/*/x.md eol=lf',
  'dir/ -text',
  '"sp ace.txt" crlf=input',
  '"q\\"uote.txt" crlf',
  '!neg.txt text',
  '*.[ch] working-tree-encoding=UTF-16',
  '**/deep/** crlf',
  '*.bad text bad@ident',
  '*.x !text',
  '*.m nested',
  '*.y -binary',
  '*.n mytext=value',
  'lit*/star.txt ident',
  '*.crlf text\r',
  `*.long text ${'x'.repeat(2100)}`,
  '   # indented comment',
  '*.multi text -text text=auto',
  '\\!bang.txt ident',
].join('\n');

function buildCorpus() {
  const repo = Repo.init('attr-corpus');
  const attributes = () => {
    repo.write('.gitattributes', `${TOP}\n`);
    repo.write(
      'sub/.gitattributes',
      ['*.txt -text', 'x.md text=auto', '/local.c ident', '[attr]sub text', 'deep/*.c -crlf'].join(
        '\n',
      ),
    );
    repo.write('sub/deep/.gitattributes', '* !text\n*.bin mytext\n*.y binary\n');
    repo.write('a/b/.gitattributes', Buffer.from('x.md ident\0\n*.md text\n', 'latin1'));
    repo.write('doc/.gitattributes', '\xef\xbb\xbf*.md eol=crlf\n');
  };
  const names = [
    'top.c',
    'top.h',
    'a.txt',
    'a.bin',
    'a.both',
    'a.both2',
    'x.x',
    'm.m',
    'y.y',
    'n.n',
    'b.bad',
    'c.crlf',
    'l.long',
    'z.zzz',
    'g.glob',
    'mm.multi',
    '!bang.txt',
    'sp ace.txt',
    'q"uote.txt',
    'neg.txt',
    'dir',
    'lit1/star.txt',
    'lit2/x/star.txt',
    'doc/readme.md',
    'doc/deep/x.txt',
    'a/b/x.md',
    'a/b/c/x.md',
    'a/x.md',
    'sub/a.txt',
    'sub/x.md',
    'sub/local.c',
    'sub/top.c',
    'sub/dir/local.c',
    'sub/deep/a.txt',
    'sub/deep/a.bin',
    'sub/deep/k.c',
    'sub/deep/y.y',
    'sub/deep/more/z.txt',
    'other/deep/a.c',
    'other/dir/f',
  ];
  for (const n of names) repo.write(n, `${n}\n`);
  repo.commit('files');
  // Added after the files, alone: they would convert the files' content on the way in.
  attributes();
  git(repo.dir, ['add', '--', ':(glob)**/.gitattributes']);
  git(repo.dir, ['commit', '-q', '-m', 'attributes']);
  return repo;
}

describe('attributes', () => {
  test('every path of a generated tree resolves as git check-attr --cached -a', () => {
    const repo = buildCorpus();
    fs.mkdirSync(path.join(repo.gitDir, 'info'), { recursive: true });
    fs.writeFileSync(
      path.join(repo.gitDir, 'info', 'attributes'),
      '*.zzz eol=crlf\n[attr]mytext text\n*.glob -ident\n',
    );
    const globalFile = path.join(tmpDir('attr-global'), 'attributes');
    fs.writeFileSync(globalFile, '*.glob ident filter=g\n*.zzz ident\n[attr]mytext crlf\n');
    spawnSync('git', ['config', 'core.attributesFile', globalFile], { cwd: repo.dir, env: gitEnv });
    // The worktree stays as committed but is hidden from git: read-tree into a fresh index.
    const list = treeEntries(repo.dir);
    const paths = [];
    for (let i = 0; i < list.count; i++) paths.push(list.name(i));
    paths.push('never/seen/at.all.txt', 'sub/deep/none.y');
    const index = path.join(repo.gitDir, 'index');
    fs.rmSync(index);
    spawnSync('git', ['read-tree', 'HEAD'], { cwd: repo.dir, env: gitEnv });
    fs.renameSync(repo.dir, `${repo.dir}-moved`);
    fs.mkdirSync(repo.dir);
    fs.renameSync(`${repo.dir}-moved/.git`, path.join(repo.dir, '.git'));
    const git = gitAttributes(repo.dir, paths);
    const ours = ourAttributes(repo.dir, paths, { list });
    assertSameAttributes(ours.attrs, git.attrs, 'attributes of the corpus');
    assert.deepEqual(
      warningSet(ours.warnings.flatMap((w) => w.split('\n'))),
      warningSet(git.stderr.split('\n')),
      'warnings',
    );
  });
});

describe('attribute files larger than git accepts', () => {
  test("skipped with git's warnings (file and blob), never read whole", () => {
    const repo = Repo.init('attr-large');
    repo.write('a.txt', 'a\n');
    repo.commit('a');
    // A 100 MiB blob (git's limit, reached) as the top .gitattributes of a tree.
    const blob = git(repo.dir, ['hash-object', '-w', '--stdin'], {
      input: Buffer.alloc(100 * 1024 * 1024),
    }).trim();
    const listing = git(repo.dir, ['ls-tree', 'HEAD']);
    const tree = git(repo.dir, ['mktree'], {
      input: `${listing}100644 blob ${blob}\t.gitattributes\n`,
    }).trim();
    // Sparse files: 560 MiB of info/attributes, a worktree .gitattributes just at the limit.
    fs.mkdirSync(path.join(repo.gitDir, 'info'), { recursive: true });
    fs.writeFileSync(path.join(repo.gitDir, 'info', 'attributes'), '');
    fs.truncateSync(path.join(repo.gitDir, 'info', 'attributes'), 560 * 1024 * 1024);
    fs.writeFileSync(repo.abs('.gitattributes'), '');
    fs.truncateSync(repo.abs('.gitattributes'), 100 * 1024 * 1024);
    const repoObj = openRepo(repo.dir);
    const odb = new (loadAddon().Odb)(repoObj.objectDirs, 0);
    try {
      const list = walkTree(odb, tree, { ntfs: true, hfs: false });
      const rssBefore = process.memoryUsage().rss;
      // Checkout: the blob and info/attributes. Checkin: the worktree file too large, so (as
      // for git) the index's blob is tried next, and is too large as well.
      for (const [direction, cached, count] of [
        ['checkout', true, 2],
        ['checkin', false, 3],
      ]) {
        const warnings = [];
        const attributes = new Attributes({
          repo: repoObj,
          odb,
          list,
          worktree: direction === 'checkin' ? repo.dir : null,
          direction,
          warn: (m) => warnings.push(m),
        });
        assert.deepEqual(attributes.lookup('a.txt'), [
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
        ]);
        if (cached) {
          // git reads the index: put the tree there.
          git(repo.dir, ['read-tree', tree]);
        }
        const theirs = gitAttributes(repo.dir, ['a.txt'], { cached });
        assert.deepEqual(warningSet(warnings), warningSet(theirs.stderr.split('\n')), direction);
        assert.equal(warnings.length, count, direction);
      }
      const grown = process.memoryUsage().rss - rssBefore;
      assert.ok(grown < 64 * 1024 * 1024, `resident memory grew by ${grown} bytes`);
    } finally {
      odb.close();
    }
  });
});
