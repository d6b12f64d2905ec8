// The documentation as a reader meets it: a README short enough to read in five minutes with a
// table of contents, links that lead somewhere, and an API reference (docs/api.md) that is the
// shipped type declarations' — every export, option, summary field and error code named there,
// and nothing named there that the types lack. (The examples are run by doc-examples.test.mjs.)

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { PROJECT } from './helpers/run.mjs';

const read = (rel) => fs.readFileSync(path.join(PROJECT, rel), 'utf8');
const DOCS = fs
  .readdirSync(path.join(PROJECT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

/** Lines outside fenced code blocks. */
function prose(text) {
  let fenced = false;
  return text.split('\n').filter((l) => {
    if (/^```/.test(l)) fenced = !fenced;
    return !fenced && !/^```/.test(l);
  });
}

/** GitHub's anchors for a file's headings (lower case, punctuation dropped, spaces to '-'). */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const l of prose(text)) {
    const m = /^#{1,6} (.+)$/.exec(l);
    if (!m) continue;
    const base = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

test('the README is short and has a table of contents of its sections', () => {
  const text = read('README.md');
  const lines = text.split('\n');
  assert.ok(lines.length <= 250, `README.md has ${lines.length} lines (at most 250)`);
  const sections = prose(text)
    .filter((l) => /^## /.test(l))
    .map((l) => l.slice(3).trim());
  assert.ok(sections.includes('Contents'), 'a "## Contents" section');
  const start = text.indexOf('## Contents');
  const toc = text.slice(start, text.indexOf('\n## ', start + 1));
  const linked = [...toc.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
  const want = [...anchors(sections.map((s) => `## ${s}`).join('\n'))].filter(
    (a) => a !== 'contents',
  );
  assert.deepEqual(linked, want, 'the contents list every section, in order');
});

test('every relative link in README.md and docs/ leads to a file and heading that exist', () => {
  const broken = [];
  for (const doc of ['README.md', ...DOCS]) {
    const text = read(doc);
    for (const line of prose(text)) {
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split('#');
        const rel = file ? path.normalize(path.join(path.dirname(doc), file)) : doc;
        if (!fs.existsSync(path.join(PROJECT, rel))) {
          broken.push(`${doc}: ${target} (no file ${rel})`);
          continue;
        }
        if (anchor && rel.endsWith('.md') && !anchors(read(rel)).has(anchor)) {
          broken.push(`${doc}: ${target} (no heading #${anchor} in ${rel})`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});

// ---------------------------------------------------------------------------------------------
// docs/api.md against dist/types (what the package ships)

const DECL = path.join(PROJECT, 'dist', 'types', 'index.d.cts');
const program = ts.createProgram([DECL], {
  strict: true,
  noEmit: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
const checker = program.getTypeChecker();
const exported = checker.getExportsOfModule(
  checker.getSymbolAtLocation(program.getSourceFile(DECL)),
);

function resolved(name) {
  const s = exported.find((e) => e.name === name);
  assert.ok(s, `${name} is not exported by dist/types/index.d.cts`);
  return s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
}

/** The property names of an exported interface, type, class (its own) or const object. */
function fieldsOf(name) {
  const sym = resolved(name);
  if (sym.flags & ts.SymbolFlags.Class) {
    const decl = sym.declarations[0];
    return checker
      .getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym))
      .filter((p) => p.declarations?.some((d) => d.parent === decl))
      .map((p) => p.name);
  }
  const type =
    sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)
      ? checker.getDeclaredTypeOfSymbol(sym)
      : checker.getTypeOfSymbol(sym);
  return checker.getPropertiesOfType(type).map((p) => p.name);
}

const api = read('docs/api.md');

/** The names in the first column of the table after `<!-- fields: Name -->`. */
function documentedFields(name) {
  const marker = `<!-- fields: ${name} -->`;
  const at = api.indexOf(marker);
  assert.ok(at >= 0, `docs/api.md has no table marked ${marker}`);
  const rows = [];
  const lines = api.slice(at + marker.length).split('\n');
  let i = 0;
  while (i < lines.length && !lines[i].startsWith('|')) i++;
  for (i += 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const cell = lines[i].split('|')[1];
    for (const m of cell.matchAll(/`([A-Za-z0-9_]+)`/g)) rows.push(m[1]);
  }
  return rows;
}

test('docs/api.md names every export of the package', () => {
  const headings = prose(api).filter((l) => /^#{2,4} /.test(l));
  const missing = exported
    .map((e) => e.name)
    .filter((n) => !headings.some((h) => h.includes(`\`${n}`)));
  assert.deepEqual(missing, [], 'exports without a heading in docs/api.md');
});

for (const name of [
  'CheckoutOptions',
  'Progress',
  'CheckoutSummary',
  'Changes',
  'Stops',
  'EngineOptions',
  'Engine',
  'PcheckoutError',
  'ErrorCodes',
]) {
  test(`docs/api.md's table of ${name} is the shipped type's`, () => {
    const want = fieldsOf(name).sort();
    const have = [...new Set(documentedFields(name))].sort();
    assert.deepEqual(
      {
        undocumented: want.filter((f) => !have.includes(f)),
        stale: have.filter((f) => !want.includes(f)),
      },
      { undocumented: [], stale: [] },
    );
  });
}

test("MaterializeOptions is a checkout's options less restore and hooks, as docs/api.md says", () => {
  const less = fieldsOf('CheckoutOptions').filter(
    (f) => !fieldsOf('MaterializeOptions').includes(f),
  );
  assert.deepEqual(less.sort(), ['hooks', 'restore']);
  assert.match(api, /`MaterializeOptions`[^\n]*less `restore` and `hooks`/);
});
