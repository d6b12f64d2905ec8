// Excludes (src/plan/ignore.ts) against git itself: every answer is compared with
// `git check-ignore --no-index -v -n -z --stdin` run in the same worktree.
//
// Paths and pattern files are latin1 strings holding raw bytes, so non-UTF-8 names and
// multi-byte characters are matched byte for byte on both sides.
//
// Whether a path is a directory only matters to directory-only patterns ("foo/"): git then
// lstat()s it. So a pattern set with such a pattern gets a real universe (real directories,
// files as hardlinks of one empty file), while the paths of any other set need not exist —
// git's answer cannot depend on them (parent directories are checked as directories either
// way). Directories are the costly part of a fixture, so they are only made where they count.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { gitEnv, prng, tmpDir } from './helpers/git.mjs';
import { Excludes } from '../dist/plan/ignore.js';
import { openRepo } from '../dist/repo/repo.js';

// The default core.excludesFile, $XDG_CONFIG_HOME/git/ignore (helpers/git.mjs isolates
// XDG_CONFIG_HOME for this process and for git): every repository without core.excludesFile
// sees it.
const XDG_IGNORE = path.join(process.env.XDG_CONFIG_HOME, 'git', 'ignore');
fs.mkdirSync(path.dirname(XDG_IGNORE), { recursive: true });
fs.writeFileSync(XDG_IGNORE, '*.xdg\n!keep.xdg\nxdg-dir/\n');

// Every fixture file is a hardlink of this one (cheap to make and to remove).
const EMPTY = path.join(tmpDir('ignore-empty'), 'empty');
fs.writeFileSync(EMPTY, '');

let totalCases = 0;
let totalIgnored = 0;

/** An absolute filesystem path (as bytes) for a latin1 relative path under `dir`. */
const fsPath = (dir, rel) => Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(rel, 'latin1')]);

/** A minimal repository (HEAD, objects/, refs/, optional config): enough for git and openRepo. */
function makeRepo(prefix, config) {
  const dir = tmpDir(prefix);
  fs.mkdirSync(path.join(dir, '.git', 'objects'), { recursive: true });
  fs.mkdirSync(path.join(dir, '.git', 'refs'));
  fs.writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  if (config) fs.writeFileSync(path.join(dir, '.git', 'config'), config);
  return dir;
}

/**
 * Creates `files` under `dir`: rel → content (a string, latin1) or null for an empty file (a
 * hardlink); a rel ending in '/' is a directory. Parent directories are created.
 */
function writeTree(dir, files) {
  const made = new Set();
  const mkdirs = (rel) => {
    if (rel === '' || made.has(rel)) return;
    made.add(rel);
    fs.mkdirSync(fsPath(dir, rel), { recursive: true });
  };
  for (const [rel, content] of Object.entries(files)) {
    if (rel.endsWith('/')) {
      mkdirs(rel.slice(0, -1));
      continue;
    }
    mkdirs(rel.slice(0, Math.max(0, rel.lastIndexOf('/'))));
    if (content === null) fs.linkSync(EMPTY, fsPath(dir, rel));
    else fs.writeFileSync(fsPath(dir, rel), Buffer.from(content, 'latin1'));
  }
}

/** Every path under `dir` (latin1 strings), .git excluded, with whether it is a directory. */
function walk(dir, rel = '', out = []) {
  const abs = rel === '' ? Buffer.from(dir) : fsPath(dir, rel);
  for (const d of fs.readdirSync(abs, { withFileTypes: true, encoding: 'buffer' })) {
    const name = d.name.toString('latin1');
    if (rel === '' && name === '.git') continue;
    const r = rel === '' ? name : `${rel}/${name}`;
    out.push({ path: r, isDir: d.isDirectory() });
    if (d.isDirectory()) walk(dir, r, out);
  }
  return out;
}

/** git's verdicts for `paths`, in order: { ignored, why }. */
async function checkIgnore(dir, paths) {
  const input = Buffer.concat(paths.map((p) => Buffer.from(`${p}\0`, 'latin1')));
  const child = spawn('git', ['check-ignore', '--no-index', '-v', '-n', '-z', '--stdin'], {
    cwd: dir,
    env: gitEnv,
  });
  const out = [];
  const err = [];
  child.stdout.on('data', (b) => out.push(b));
  child.stderr.on('data', (b) => err.push(b));
  child.stdin.end(input);
  const status = await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (status !== 0 && status !== 1) {
    throw new Error(`git check-ignore failed in ${dir}: ${Buffer.concat(err).toString()}`);
  }
  const fields = Buffer.concat(out).toString('latin1').split('\0');
  fields.pop();
  assert.equal(fields.length, 4 * paths.length, `check-ignore output in ${dir}`);
  return paths.map((p, i) => {
    const [source, line, pattern, pathname] = fields.slice(4 * i, 4 * i + 4);
    assert.equal(pathname, p, 'check-ignore answers in input order');
    return {
      // -v reports the deciding pattern: a negated one ("!...") means "not ignored".
      ignored: source !== '' && !pattern.startsWith('!'),
      why: source === '' ? 'no pattern' : `${source}:${line}:${pattern}`,
    };
  });
}

/**
 * Asks git and Excludes about `queries` ({ path, isDir }; default: everything in the
 * worktree); returns the number of cases and the disagreements, described with `label(path)`.
 */
async function differential(dir, { queries, label = () => '' } = {}) {
  queries ??= walk(dir);
  const theirs = await checkIgnore(
    dir,
    queries.map((q) => q.path),
  );
  const excludes = new Excludes(openRepo(dir));
  const ours = queries.map((q) => excludes.isIgnored(q.path, q.isDir));
  // The per-directory cache must not make the answers depend on the order of the questions.
  const again = new Excludes(openRepo(dir));
  for (let i = queries.length - 1; i >= 0; i--) {
    const q = queries[i];
    assert.equal(again.isIgnored(q.path, q.isDir), ours[i], `order-dependent answer: ${q.path}`);
  }
  const mismatches = [];
  queries.forEach((q, i) => {
    if (ours[i] !== theirs[i].ignored) {
      mismatches.push(
        `${JSON.stringify(q.path)}${q.isDir ? '/' : ''}: git ${theirs[i].ignored} (${
          theirs[i].why
        }), ours ${ours[i]} ${label(q.path)}`,
      );
    }
  });
  totalCases += queries.length;
  totalIgnored += theirs.filter((t) => t.ignored).length;
  return { count: queries.length, mismatches };
}

function assertAgrees(result) {
  assert.deepEqual(result.mismatches.slice(0, 30), [], `${result.mismatches.length} mismatches`);
}

/** Runs `fn` over `items` with at most `limit` running at once. */
async function pool(items, limit, fn) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

/** Does an exclude file with these lines hold a directory-only pattern? */
const hasDirOnly = (lines) => lines.some((l) => /\/ *$/.test(l));

/**
 * The universe under `prefix` ('' or 'dir/'): as real files and directories when `real`,
 * else as paths only. Returns the file map to write and the queries.
 */
function universe(prefix, real) {
  const files = {};
  const queries = [];
  const dirs = new Set();
  for (const rel of UNIVERSE_FILES) {
    const parts = rel.split('/');
    for (let k = 1; k < parts.length; k++) dirs.add(parts.slice(0, k).join('/'));
    if (real) files[prefix + rel] = null;
    queries.push({ path: prefix + rel, isDir: false });
  }
  for (const rel of UNIVERSE_DIRS) dirs.add(rel);
  for (const rel of dirs) {
    if (real) files[`${prefix}${rel}/`] = null;
    queries.push({ path: prefix + rel, isDir: real });
  }
  for (const rel of UNIVERSE_VIRTUAL) queries.push({ path: prefix + rel, isDir: false });
  return { files, queries };
}

// ---------------------------------------------------------------------------------------------
// The table: pattern sets × a fixed universe of files and directories.

/** Files of the universe (their parent directories are directories of the universe). */
const UNIVERSE_FILES = [
  'foo',
  'Foo',
  'bar.o',
  'FOO.O',
  'baz.txt',
  'x.log',
  '.hidden',
  'data.xdg',
  'keep.xdg',
  'foo.bar',
  'one',
  'two',
  'a/foo/file',
  'a/foo/bar.o',
  'a/b/foo',
  'a/b/c/d.txt',
  'a/b/c/foo',
  'a/x.txt',
  'a/bar',
  'b/foo',
  'b/a/foo',
  'b/a/b',
  'doc/frotz/x',
  'doc/frotz.txt',
  'build/out.o',
  'build/keep.txt',
  'build/sub/keep.txt',
  'deep/one/two/leaf.txt',
  'deep/one/x.txt',
  'abc',
  'bbc',
  'aXc',
  'a-c',
  'a]c',
  'a[c',
  'a*c',
  'a?c',
  'a\\c',
  'a c',
  'a ',
  'a\tb',
  'ac',
  'a9c',
  'a.c',
  '#x',
  '!x',
  '\\x',
  'caf\xc3\xa9',
  '\xff\xfe.bin',
];
/** Empty directories of the universe. */
const UNIVERSE_DIRS = ['emptydir'];
/** Paths that never exist (files below directories that do not exist). */
const UNIVERSE_VIRTUAL = [
  'a/c',
  'xdg-dir/f',
  'doc/a/frotz/y',
  'doc/x/y/z.txt',
  'deep/one/two/three/leaf.txt',
  'x/one/y/two/z',
  'one-dir/two/x',
  'src/build/main.c',
  'a/b/c/d/e/f.txt',
];

const P = String.raw;

/** Each entry is the lines of one exclude file. */
const PATTERN_SETS = [
  // literal names, anchoring, directory-only
  ['foo'],
  ['/foo'],
  ['foo/'],
  ['/foo/'],
  ['a/b'],
  ['a/b/'],
  ['/a/b/c'],
  ['a/b/c/'],
  ['b/foo'],
  ['b/a'],
  ['doc/frotz/'],
  ['doc/frotz'],
  ['/doc/frotz'],
  ['frotz/'],
  ['frotz'],
  ['two/three'],
  ['three/'],
  ['emptydir/'],
  ['emptydir'],
  ['foo.bar'],
  ['.hidden'],
  ['Foo'],
  ['FOO.O'],
  ['a/c'],
  ['a/foo/file'],
  // wildcards
  ['*'],
  ['/*'],
  ['*/'],
  ['/*/'],
  ['*.o'],
  ['*.O'],
  ['bar.*'],
  ['*.txt'],
  ['*.*'],
  ['.*'],
  ['foo*'],
  ['*foo'],
  ['*foo*'],
  ['f*o'],
  ['f?o'],
  ['f??'],
  ['???'],
  ['?'],
  ['a?c'],
  ['a*c'],
  ['a**c'],
  ['*/foo'],
  ['*/*/foo'],
  ['a/*'],
  ['a/*/foo'],
  ['a/*/'],
  ['*/b/*'],
  ['doc/*.txt'],
  ['*/*.txt'],
  ['a/b/*/d'],
  ['/*.txt'],
  ['a/x*'],
  ['*/*'],
  ['*/*/'],
  ['d*/'],
  // ** forms
  ['**'],
  ['**/'],
  ['/**'],
  ['/**/'],
  ['**/foo'],
  ['**/foo/'],
  ['/**/foo'],
  ['**/foo/**'],
  ['foo/**'],
  ['foo/**/'],
  ['a/**'],
  ['a/**/'],
  ['a/**/foo'],
  ['a/**/b'],
  ['a/**/c/'],
  ['**/b/**'],
  ['**/a/foo'],
  ['a/foo/**/*'],
  ['doc/**/*.txt'],
  ['**/*.txt'],
  ['deep/**/leaf.txt'],
  ['**/three/leaf.txt'],
  ['one/**/two'],
  ['**/one/**/two/**'],
  ['x/**/two/z'],
  ['**foo'],
  ['foo**'],
  ['a/b**'],
  ['a/**b'],
  ['a**/foo'],
  ['a/b**/foo'],
  ['doc**/frotz'],
  ['a/***/foo'],
  ['***/foo'],
  ['a/**/**/foo'],
  [P`**\/foo`],
  [P`a/**\/foo`],
  ['**/**'],
  ['*/**'],
  ['**/*'],
  ['**/*/'],
  // bracket expressions
  ['[ab]bc'],
  ['a[!b]c'],
  ['a[^b]c'],
  ['a[a-z]c'],
  ['a[A-Z]c'],
  ['a[]]c'],
  ['a[!]]c'],
  ['a[[]c'],
  [P`a[\]]c`],
  [P`a[\\]c`],
  ['a[-]c'],
  ['a[a-]c'],
  ['a[-a]c'],
  ['a[!a-z]c'],
  ['a[z-a]c'],
  ['a[b-b]c'],
  [P`a[\a-\z]c`],
  ['a[]-a]c'],
  ['a[!-]c'],
  ['a[[:alpha:]]c'],
  ['a[[:digit:][:upper:]]c'],
  ['a[[:space:]]c'],
  ['a[[:blank:]]b'],
  ['a[[:punct:]]c'],
  ['a[![:alnum:]]c'],
  ['a[[:bogus:]]c'],
  ['a[[:alpha:]c'],
  ['a[[:alpha]c'],
  ['a[[:alpha]]c'],
  ['a[[:]]c'],
  ['a[[:]c'],
  ['a[[::]]c'],
  ['a[b'],
  ['a['],
  ['*['],
  ['a[*]c'],
  ['a[?]c'],
  ['[a-c]*'],
  ['[!.]*'],
  ['*[!o]'],
  ['*[[:alnum:]]'],
  ['[[:lower:]]oo'],
  ['[[:upper:]]oo'],
  ['[[:xdigit:]]*'],
  ['a[/]c'],
  ['a[!x]c'],
  ['a[!x]b'],
  ['caf?'],
  ['caf??'],
  ['caf\xc3?'],
  ['caf[\xc3]*'],
  ['[\x80-\xff]*'],
  ['*[\xa9]'],
  ['[! -\x7f]*'],
  // escapes
  [P`a\*c`],
  [P`a\?c`],
  [P`a\[c`],
  [P`a\]c`],
  [P`a\\c`],
  [P`\#x`],
  ['#x'],
  [P`\!x`],
  ['!x'],
  [P`\x`],
  [P`\\x`],
  [P`a\ `],
  ['a\\'],
  [P`foo\/`],
  [P`\f\o\o`],
  [P`a\ c`],
  [P`a\/foo/`],
  [P`\a/b`],
  [P`a/\*`],
  [P`b/a\/b`],
  [P`*\.o`],
  // trailing spaces and other whitespace
  ['foo   '],
  [P`a\  `],
  [P`a \ `],
  ['a  '],
  ['a c '],
  ['foo\t'],
  ['a\tb'],
  ['  foo'],
  [' '],
  ['   '],
  ['a c'],
  // negation and precedence within one file
  ['*.o', '!bar.o'],
  ['!bar.o', '*.o'],
  ['*', '!*.txt'],
  ['*', '!*/'],
  ['*', '!*/', '!*.txt'],
  ['/*', '!/a'],
  ['/*', '!/a', '/a/*', '!/a/b'],
  ['foo', '!foo/'],
  ['foo/', '!a/foo'],
  ['build/', '!build/keep.txt'],
  ['build', '!build/keep.txt'],
  ['build/*', '!build/keep.txt'],
  ['build/**', '!build/sub/'],
  ['build/**', '!build/**/'],
  ['build/**', '!build/**/', '!keep.txt'],
  ['a/', '!a/b/'],
  ['a/', '!a/'],
  ['a', '!a/'],
  ['**/foo', '!b/foo'],
  ['!foo', 'foo'],
  ['foo', '!foo'],
  ['a/b/c', '!a/b/c/'],
  ['!!x'],
  ['*', '!!x'],
  ['deep/', '!deep/one/two/three/leaf.txt'],
  ['deep/*', '!deep/one/', 'deep/one/*', '!deep/one/two/'],
  ['*.txt', '!a/**'],
  ['!*.txt', '*'],
  ['doc/', '!doc/frotz/', '!doc/frotz/x'],
  ['!'],
  ['/'],
  ['//'],
  ['!/'],
  // comments, blank lines
  ['# comment', '', 'foo', '  # not a comment', '#x'],
  ['', '', 'bar.o', ''],
];

describe('Excludes against git check-ignore', () => {
  test('pattern table in subdirectory .gitignore files (anchored to their directory)', async () => {
    const dir = makeRepo('ignore-table');
    const files = {};
    const queries = [];
    PATTERN_SETS.forEach((lines, i) => {
      files[`t${i}/.gitignore`] = lines.join('\n') + '\n';
      const u = universe(`t${i}/`, hasDirOnly(lines));
      Object.assign(files, u.files);
      queries.push({ path: `t${i}`, isDir: true }, ...u.queries);
    });
    writeTree(dir, files);
    const result = await differential(dir, {
      queries,
      label: (p) => JSON.stringify(PATTERN_SETS[Number(/^t(\d+)/.exec(p)[1])]),
    });
    assert.ok(result.count > PATTERN_SETS.length * UNIVERSE_FILES.length);
    assertAgrees(result);
  });

  test('pattern table in the root .gitignore, info/exclude and core.excludesFile', async (t) => {
    // One repository (and one git run) per set, so a sample of the table: every set with a
    // slash before its end (the ones anchored to the file's directory) and a few others.
    const anchored = (lines) => lines.some((l) => /^!?\/|.\/./.test(l));
    const chosen = PATTERN_SETS.filter((lines, i) =>
      anchored(lines) ? i % 3 === 0 : i % 12 === 0,
    );
    const results = await pool(chosen, 4, async (lines, i) => {
      const text = lines.join('\n') + '\n';
      const where = i % 3; // rotate the set through the three root-level sources
      const global = where === 2 ? path.join(tmpDir('global-ignore'), 'ignore') : undefined;
      const dir = makeRepo('ignore-root', global && `[core]\n\texcludesFile = ${global}\n`);
      const u = universe('', hasDirOnly(lines));
      if (where === 0) u.files['.gitignore'] = text;
      writeTree(dir, u.files);
      if (where === 1) {
        fs.mkdirSync(path.join(dir, '.git', 'info'));
        fs.writeFileSync(path.join(dir, '.git', 'info', 'exclude'), Buffer.from(text, 'latin1'));
      }
      if (where === 2) fs.writeFileSync(global, Buffer.from(text, 'latin1'));
      const source = ['.gitignore', 'info/exclude', 'excludesFile'][where];
      return differential(dir, {
        queries: u.queries,
        label: () => `${source} ${JSON.stringify(lines)}`,
      });
    });
    const count = results.reduce((n, r) => n + r.count, 0);
    t.diagnostic(`root-level sources: ${chosen.length} sets, ${count} cases`);
    assert.ok(chosen.length >= 30 && count > 2000, `${chosen.length} sets, ${count} cases`);
    assertAgrees({ count, mismatches: results.flatMap((r) => r.mismatches) });
  });

  test('character classes and ranges on every byte', async () => {
    const dir = makeRepo('ignore-bytes');
    const classes = ['alnum', 'alpha', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print'];
    classes.push('punct', 'space', 'upper', 'xdigit');
    const sets = [
      ...classes.map((c) => `x[[:${c}:]]`),
      ...classes.map((c) => `x[![:${c}:]]`),
      'x?',
      'x[\x80-\xff]',
      'x[!a-z]',
      'x[ -~]',
      'x[\x01-/]',
      'x[]-\xa0]',
      'x*',
    ];
    const files = {};
    const queries = [];
    sets.forEach((pattern, i) => {
      files[`c${i}/.gitignore`] = `${pattern}\n`;
      for (let b = 1; b < 256; b++) {
        if (b !== 0x2f) queries.push({ path: `c${i}/x${String.fromCharCode(b)}`, isDir: false });
      }
    });
    writeTree(dir, files);
    const result = await differential(dir, {
      queries,
      label: (p) => JSON.stringify(sets[Number(/^c(\d+)/.exec(p)[1])]),
    });
    assertAgrees(result);
  });

  test('precedence: own directory > parents > info/exclude > core.excludesFile', async () => {
    const global = path.join(tmpDir('global-ignore'), 'global');
    fs.writeFileSync(global, '*.g\n!keep.g\n*.i\n*.r\n*.a\n*.b\n!*.n\nlevels/\n');
    const dir = makeRepo('ignore-precedence', `[core]\n\texcludesFile = ${global}\n`);
    fs.mkdirSync(path.join(dir, '.git', 'info'));
    fs.writeFileSync(
      path.join(dir, '.git', 'info', 'exclude'),
      '!*.i\n*.n\n!keep.r\n*.e\n!keep.e\nfoo\n',
    );
    const files = {
      '.gitignore': '!*.r\n*.a\n!keep.a\n*.x\nsub/\n!/sub/\n!foo\n',
      'a/.gitignore': '!*.a\n*.b\n!keep.x\n/only-here\nfoo\n',
      'a/b/.gitignore': '*.a\n!*.b\n!/keep.x\n*.x\nonly-here\n',
      'a/b/c/.gitignore': '!*.x\n',
      'levels/x': null,
    };
    const names = ['f.g', 'keep.g', 'f.i', 'f.r', 'keep.r', 'f.a', 'keep.a', 'f.b', 'f.n'];
    names.push('f.e', 'keep.e', 'f.x', 'keep.x', 'only-here', 'foo', 'data.xdg', 'keep.xdg');
    for (const d of ['', 'a/', 'a/b/', 'a/b/c/', 'a/b/c/d/', 'z/', 'sub/', 'sub/a/']) {
      for (const n of names) files[`${d}${n}`] = null;
    }
    writeTree(dir, files);
    assertAgrees(await differential(dir));
  });

  test('an excluded directory excludes everything inside; negations cannot re-include', async () => {
    const dir = makeRepo('ignore-parents');
    const files = {
      '.gitignore': [
        'build/',
        '!build/keep.txt',
        '!build/sub/',
        'out',
        '!out/keep',
        'cache/*',
        '!cache/keep/',
        'logs/**',
        '!logs/keep.log',
        '!logs/**/',
        'gen/',
        'tmp/**/',
        '!tmp/keep/',
        'x/y/',
        'hidden/',
        '!hidden/',
        'nested',
      ].join('\n'),
      'build/keep.txt': null,
      'build/sub/keep.txt': null,
      'build/.gitignore': '!*\n',
      'out/keep': null,
      'out/deep/keep': null,
      'cache/keep/f': null,
      'cache/other/f': null,
      'cache/top.txt': null,
      'logs/keep.log': null,
      'logs/a/keep.log': null,
      'logs/a/b/other.log': null,
      'gen/.gitignore': '!*\n!/\n',
      'gen/f': null,
      'gen/g/f': null,
      'tmp/keep/f': null,
      'tmp/other/f': null,
      'tmp/f': null,
      'tmp/keep/deeper/f': null,
      'x/y/z/f': null,
      'x/f': null,
      'q/x/y/f': null,
      'hidden/f': null,
      'p/.gitignore': 'nested/\n',
      'p/nested/.gitignore': '!*\n',
      'p/nested/f': null,
      'p/q/nested/f': null,
      'r/.gitignore': '!nested\n',
      'r/nested/f': null,
      'r/s/.gitignore': 'f\n!nested\n',
      'r/s/nested/f': null,
    };
    writeTree(dir, files);
    const extra = ['build/new/file', 'out/missing', 'gen/g/h/i'];
    const queries = [...walk(dir), ...extra.map((p) => ({ path: p, isDir: false }))];
    assertAgrees(await differential(dir, { queries }));
  });

  test('file format: CRLF, BOM, comments, NUL bytes, missing final newline, spaces', async () => {
    const dir = makeRepo('ignore-format');
    const files = {
      '.gitignore': '\xef\xbb\xbfbom-first\r\n*.crlf\r\n#comment\r\n\r\n  \r\n\\#hash\nsp1 \t\n',
      'a/.gitignore': 'cr-only\r\r\nnul\x00tail\n\x00zzz\ntwo-cr\r\r\nlast-no-newline',
      'b/.gitignore': 'bom-first\n\xef\xbb\xbfsecond\n\\\n\\ \nend\\  \\  \n! \n!\\ \n',
      'c/.gitignore': '\xef\xbb\xbf',
      'd/.gitignore': '',
      'e/.gitignore': '\n\n\n',
      'f/.gitignore': 'z\\',
    };
    const names = ['bom-first', '\xef\xbb\xbfbom-first', 'x.crlf', 'x.crlf\r', 'comment'];
    names.push('#comment', '#hash', 'sp1', 'sp1 \t', 'sp1 ', 'cr-only', 'cr-only\r', 'nul');
    names.push('nultail', 'zzz', 'two-cr', 'two-cr\r', 'last-no-newline', 'second');
    names.push('\xef\xbb\xbfsecond', '\\', ' ', 'end\\  \\ ', 'end  ', 'end\\ ', 'end ', '!');
    names.push('z', 'z\\');
    for (const d of ['', 'a/', 'b/', 'c/', 'd/', 'e/', 'f/']) {
      for (const n of names) files[`${d}${n}`] = null;
    }
    writeTree(dir, files);
    assertAgrees(await differential(dir));
  });

  test('symlinked .gitignore files are not followed; other exclude files are', async () => {
    const store = tmpDir('ignore-store');
    fs.writeFileSync(path.join(store, 'patterns'), '*.sym\nfoo\n');
    fs.writeFileSync(path.join(store, 'global'), '*.glob\n');
    fs.writeFileSync(path.join(store, 'info'), '*.info\n');
    const globalLink = path.join(store, 'global-link');
    fs.symlinkSync(path.join(store, 'global'), globalLink);
    const dir = makeRepo('ignore-symlinks', `[core]\n\texcludesFile = ${globalLink}\n`);
    fs.mkdirSync(path.join(dir, '.git', 'info'));
    fs.symlinkSync(path.join(store, 'info'), path.join(dir, '.git', 'info', 'exclude'));
    writeTree(dir, {
      'real/.gitignore': '*.real\n',
      'f.sym': null,
      foo: null,
      'x.glob': null,
      'x.info': null,
      'real/x.sym': null,
      'real/x.real': null,
      'sub/x.sym': null,
      'sub/foo': null,
      'sub/x.real': null,
      'dirignore/.gitignore/inner': null,
      'dirignore/x.sym': null,
    });
    fs.symlinkSync(path.join(store, 'patterns'), path.join(dir, '.gitignore'));
    fs.symlinkSync('../real/.gitignore', path.join(dir, 'sub', '.gitignore'));
    assertAgrees(await differential(dir));
    // git reads the symlinked info/exclude and core.excludesFile...
    const ex = new Excludes(openRepo(dir));
    assert.equal(ex.isIgnored('x.glob', false), true);
    assert.equal(ex.isIgnored('x.info', false), true);
    // ...but not a symlinked .gitignore.
    assert.equal(ex.isIgnored('f.sym', false), false);
    assert.equal(ex.isIgnored('sub/x.real', false), false);
    assert.equal(ex.isIgnored('real/x.real', false), true);
  });

  test('core.excludesFile: "~/" expansion, relative path, missing file, XDG default', async () => {
    const home = process.env.HOME;
    fs.writeFileSync(path.join(home, 'home-ignore'), '*.home\n');
    const cases = [
      ['~/home-ignore', { 'x.home': null, 'x.xdg': null }],
      ['rel-ignore', { 'rel-ignore': '*.rel\n', 'x.rel': null, 'x.xdg': null }],
      [path.join(home, 'does-not-exist'), { 'x.xdg': null, 'x.home': null }],
      ['', { 'x.xdg': null, 'x.home': null }],
      [undefined, { 'x.xdg': null, 'keep.xdg': null, 'xdg-dir/x': null, 'x.home': null }],
    ];
    const verdicts = await pool(cases, 4, async ([value, files]) => {
      const config = value === undefined ? undefined : `[core]\n\texcludesFile = ${value}\n`;
      const dir = makeRepo('ignore-global', config);
      writeTree(dir, files);
      assertAgrees(await differential(dir));
      const ex = new Excludes(openRepo(dir));
      return ['x.home', 'x.rel', 'x.xdg'].map((p) => ex.isIgnored(p, false));
    });
    // Each file really was read (or not).
    assert.deepEqual(verdicts, [
      [true, false, false],
      [false, true, false],
      [false, false, false],
      [false, false, false],
      [false, false, true],
    ]);
  });

  test('fuzz: random patterns and paths', async () => {
    const rand = prng(20240611);
    const pick = (xs) => xs[Math.floor(rand() * xs.length)];
    const segs = ['a', 'b', 'ab', 'ba', 'aa', 'a.b', 'b.a', 'abc', 'a b', 'x', 'bab'];
    segs.push('[', 'a]', 'a-b', '\\', 'a*');
    const pieces = ['a', 'b', 'a', 'b', '.', '*', '*', '**', '?', '[ab]', '[!a]', '[a-b]'];
    pieces.push('[^b]', '\\a', '\\*', ' ', 'c', '[', ']', '\\', '-', '[]a]', '[!]]', '***');
    pieces.push('[[:alpha:]]', '\\/', '[!/]', '[b-a]');
    const randomPattern = () => {
      const n = 1 + Math.floor(rand() * 3);
      const parts = [];
      for (let i = 0; i < n; i++) {
        if (rand() < 0.15) {
          parts.push('**');
          continue;
        }
        let s = '';
        const k = 1 + Math.floor(rand() * 3);
        for (let j = 0; j < k; j++) s += pick(pieces);
        parts.push(s);
      }
      let p = parts.join('/');
      if (rand() < 0.2) p = `/${p}`;
      if (rand() < 0.25) p += '/';
      if (rand() < 0.1) p += ' ';
      if (rand() < 0.25) p = `!${p}`;
      return p;
    };
    const dir = makeRepo('ignore-fuzz');
    const files = {};
    const queries = [];
    const sets = [];
    for (let i = 0; i < 200; i++) {
      const lines = [];
      const n = 1 + Math.floor(rand() * 3);
      for (let j = 0; j < n; j++) lines.push(randomPattern());
      sets.push(lines);
      files[`f${i}/.gitignore`] = lines.join('\n') + '\n';
      const real = hasDirOnly(lines);
      // A few random paths; a name is either a file or a directory.
      const kinds = new Map();
      for (let j = 0; j < 12; j++) {
        const depth = 1 + Math.floor(rand() * 4);
        const parts = Array.from({ length: depth }, () => pick(segs));
        const prefixes = parts.map((_, k) => parts.slice(0, k + 1).join('/'));
        const leaf = prefixes.pop();
        if (prefixes.some((q) => kinds.get(q) === 'file') || kinds.get(leaf) === 'dir') continue;
        for (const q of prefixes) kinds.set(q, 'dir');
        kinds.set(leaf, 'file');
      }
      for (const [rel, kind] of kinds) {
        if (real) files[`f${i}/${rel}${kind === 'dir' ? '/' : ''}`] = null;
        queries.push({ path: `f${i}/${rel}`, isDir: real && kind === 'dir' });
      }
    }
    writeTree(dir, files);
    const result = await differential(dir, {
      queries,
      label: (p) => JSON.stringify(sets[Number(/^f(\d+)/.exec(p)[1])]),
    });
    assert.ok(result.count > 3000, `${result.count}`);
    assertAgrees(result);
  });

  test('10,000 queries take well under 100 ms', async (t) => {
    const rootPatterns = ['node_modules/', '*.log', '!important.log', '/dist/', 'build/'];
    rootPatterns.push('/coverage', '**/tmp/**', '*.swp', '.DS_Store', '*.o', '*.a', '*.so');
    rootPatterns.push('*.py[cod]', '__pycache__/', '.env', '.env.*', '!.env.example', '*.min.js');
    rootPatterns.push('vendor/**/*.map', 'docs/_build/', '*~', '.idea/', '.vscode/*');
    rootPatterns.push('!.vscode/settings.json', 'target/', '*.class', '[Bb]in/', '[Oo]bj/');
    rootPatterns.push('*.tmp', 'cache-*/');
    const files = { '.gitignore': rootPatterns.join('\n') + '\n' };
    const exts = ['.c', '.h', '.o', '.log', '.js', '.min.js', '.pyc', '.txt', '.swp', '.tmp'];
    const paths = [];
    for (let d = 0; d < 200; d++) {
      const base = `pkg${d % 20}/mod${d}`;
      if (d % 10 === 0) files[`${base}/.gitignore`] = `*.gen\n!keep.gen\n/local/\nout-*\n`;
      for (let f = 0; f < 50; f++) {
        const sub = f % 5 === 0 ? 'tmp/' : f % 7 === 0 ? 'build/' : '';
        const name = f % 9 === 0 ? `out-${f}.gen` : `file${f}${exts[f % exts.length]}`;
        paths.push(`${base}/${sub}${name}`);
      }
    }
    const dir = makeRepo('ignore-perf');
    writeTree(dir, files);
    const repo = openRepo(dir);
    const runs = [];
    let ignored = 0;
    for (let run = 0; run < 3; run++) {
      const t0 = process.hrtime.bigint();
      const excludes = new Excludes(repo); // cold: every .gitignore is read during the run
      ignored = 0;
      for (const p of paths) if (excludes.isIgnored(p, false)) ignored++;
      runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    t.diagnostic(`10,000 isIgnored queries, cold: ${runs.map((r) => r.toFixed(1)).join(', ')} ms`);
    assert.equal(paths.length, 10000);
    assert.ok(ignored > 1000 && ignored < 9000, `ignored ${ignored}`);
    assert.ok(Math.min(...runs) < 100, `10,000 queries took ${runs} ms`);
    // And these answers are git's too.
    assertAgrees(
      await differential(dir, { queries: paths.map((p) => ({ path: p, isDir: false })) }),
    );
  });

  test('the differential table is large', (t) => {
    t.diagnostic(`differential cases compared with git: ${totalCases} (${totalIgnored} ignored)`);
    assert.ok(totalCases > 20000, `${totalCases}`);
    // Both answers are well represented.
    assert.ok(totalIgnored > totalCases / 5 && totalIgnored < (totalCases * 4) / 5);
  });
});
