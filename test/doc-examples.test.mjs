// Every code example in README.md and docs/*.md is run, as a reader would run it.
//
// A fenced block's language says what it is: `js` (an ES module), `cjs` (CommonJS) and `sh`
// (bash, `set -euo pipefail`) are examples and run; `text` (output, a synopsis) and `json`
// (parsed here) are not programs. Any other language, or none, fails the test, so that an
// example cannot escape by being tagged `bash` or `ts`. An example that cannot run here says so
// in a comment on the line before its fence, `<!-- not run: <reason> -->`, and the test prints
// every such reason.
//
// Each example runs in a sandbox of its own, the same for all, in which the paths the examples
// use exist:
//   upstream/   a repository: main (HEAD) with src/, docs/, a script, a symlink; tags v1.2 and
//               v1.3; a branch topic
//   repo/       `git clone --no-checkout upstream repo`: the first checkout of it is a fresh one
//   node_modules/pcheckout  this package (and `pcheckout` on PATH, for `npx pcheckout`)
// An example must exit 0 (one that shows an error catches it), and a js or cjs one must print
// nothing on stderr. An example followed by `<!-- output -->` and a `text` block must print
// exactly that on stdout.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Repo, git, gitEnv, tmpDir } from './helpers/git.mjs';
import { CLI, PROJECT } from './helpers/run.mjs';

const RUN = new Set(['js', 'cjs', 'sh']);
const NOT_PROGRAMS = new Set(['text', 'json']);

function docFiles() {
  const docs = path.join(PROJECT, 'docs');
  return [
    'README.md',
    ...fs
      .readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

/** The fenced blocks of a Markdown file: { lang, code, line, skip }. */
export function fencedBlocks(text) {
  const blocks = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    assert.ok(i < lines.length, `unclosed code block at line ${start + 1}`);
    const before = (lines[start - 1] ?? '').trim();
    const skip = /^<!-- not run: (.+?) -->$/.exec(before);
    const code = body.join('\n') + '\n';
    if (before === '<!-- output -->') {
      const prev = blocks.at(-1);
      assert.ok(
        prev && RUN.has(prev.lang) && open[1] === 'text',
        `line ${start + 1}: an output block follows an example`,
      );
      prev.output = code;
      continue;
    }
    blocks.push({ lang: open[1], code, line: start + 1, skip: skip?.[1] });
  }
  return blocks;
}

let sandboxTemplate;
function template() {
  if (sandboxTemplate) return sandboxTemplate;
  const box = tmpDir('doc-box');
  const up = Repo.init('doc-upstream');
  up.write('README.md', '# demo\n');
  up.write('src/app.js', "console.log('app');\n");
  up.write('src/lib/util.js', 'export const one = 1;\n');
  up.write('docs/guide.md', 'guide\n');
  up.write('bin/run.sh', '#!/bin/sh\necho run\n', { exec: true });
  up.symlink('latest', 'docs/guide.md');
  up.commit('first');
  up.tag('v1.2');
  up.write('src/app.js', "console.log('app 1.3');\n");
  up.commit('second');
  up.tag('v1.3');
  git(up.dir, ['checkout', '-q', '-b', 'topic']);
  up.write('src/topic.js', 'topic\n');
  up.commit('topic');
  git(up.dir, ['checkout', '-q', 'main']);
  fs.renameSync(up.dir, path.join(box, 'upstream'));
  git(box, ['clone', '-q', '--no-checkout', 'upstream', 'repo']);
  const mods = path.join(box, 'node_modules');
  fs.mkdirSync(path.join(mods, '.bin'), { recursive: true });
  fs.symlinkSync(PROJECT, path.join(mods, 'pcheckout'));
  fs.symlinkSync(CLI, path.join(mods, '.bin', 'pcheckout'));
  fs.writeFileSync(path.join(box, 'package.json'), '{ "private": true }\n');
  sandboxTemplate = box;
  return box;
}

function sandbox() {
  const dir = tmpDir('doc-example');
  fs.cpSync(template(), dir, { recursive: true, verbatimSymlinks: true });
  // node_modules/pcheckout must stay a link to this checkout, not a copy of it.
  return dir;
}

function run(block, cwd) {
  const env = {
    ...gitEnv,
    PATH: `${path.join(cwd, 'node_modules', '.bin')}:${gitEnv.PATH}`,
    npm_config_update_notifier: 'false',
    npm_config_offline: 'true',
  };
  if (block.lang === 'sh') {
    return spawnSync('bash', ['-euo', 'pipefail', '-c', block.code], {
      cwd,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
  }
  const file = path.join(cwd, block.lang === 'cjs' ? 'example.cjs' : 'example.mjs');
  fs.writeFileSync(file, block.code);
  return spawnSync(process.execPath, [file], { cwd, env, encoding: 'utf8', timeout: 120_000 });
}

for (const doc of docFiles()) {
  const blocks = fencedBlocks(fs.readFileSync(path.join(PROJECT, doc), 'utf8'));
  test(`${doc}: every code block is an example that runs, or says what it is`, async (t) => {
    const bad = blocks.filter((b) => !RUN.has(b.lang) && !NOT_PROGRAMS.has(b.lang));
    assert.deepEqual(
      bad.map((b) => `line ${b.line}: \`\`\`${b.lang}`),
      [],
      'code blocks must be js, cjs, sh (run) or text, json',
    );
    for (const b of blocks.filter((x) => x.lang === 'json')) {
      assert.doesNotThrow(() => JSON.parse(b.code), `${doc} line ${b.line}: not JSON`);
    }
    for (const b of blocks.filter((x) => RUN.has(x.lang))) {
      const where = `${doc} line ${b.line} (${b.lang})`;
      if (b.skip) {
        t.diagnostic(`not run: ${where}: ${b.skip}`);
        continue;
      }
      await t.test(where, () => {
        const r = run(b, sandbox());
        if (r.error) throw r.error;
        assert.equal(
          r.status,
          0,
          `${where} exited ${r.status}${r.signal ? ` (${r.signal})` : ''}\n--- code\n${b.code}--- stdout\n${r.stdout}--- stderr\n${r.stderr}`,
        );
        // The CLI's report goes to stderr, as git's does; a module prints nothing there.
        if (b.lang !== 'sh') assert.equal(r.stderr, '', `${where} wrote to stderr:\n${r.stderr}`);
        if (b.output !== undefined) assert.equal(r.stdout, b.output, `${where}: its output block`);
      });
    }
  });
}

test('the sandbox holds what the examples name', () => {
  const box = sandbox();
  for (const p of ['upstream/.git', 'repo/.git', 'node_modules/pcheckout/package.json']) {
    assert.ok(fs.existsSync(path.join(box, p)), p);
  }
  assert.equal(fs.existsSync(path.join(box, 'repo', '.git', 'index')), false, 'repo is unchecked');
  assert.deepEqual(fencedBlocks('x\n<!-- not run: why -->\n```sh\ntrue\n```\n'), [
    { lang: 'sh', code: 'true\n', line: 3, skip: 'why' },
  ]);
  const [withOutput] = fencedBlocks('```sh\necho 1\n```\n<!-- output -->\n```text\n1\n```\n');
  assert.equal(withOutput.output, '1\n');
  const r = run({ lang: 'js', code: "console.log('x')\n" }, box);
  assert.equal(r.stdout, 'x\n');
});
