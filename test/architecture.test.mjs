// docs/Architecture.md names the phase modules and where each concept lives: every path it names
// must exist, and its phase list must be the one the code reports (src/run/control.ts).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { PROJECT } from './helpers/run.mjs';

const doc = fs.readFileSync(path.join(PROJECT, 'docs', 'Architecture.md'), 'utf8');

test('every module and folder the Architecture page names exists', () => {
  const named = [...doc.matchAll(/`((?:src|native|test)\/[^`\s]+)`/g)].map((m) => m[1]);
  assert.ok(named.length > 30, `only ${named.length} paths named`);
  const missing = named.filter((p) => !fs.existsSync(path.join(PROJECT, p)));
  assert.deepEqual(missing, [], 'named on docs/Architecture.md but not in the tree');
});

test('the page lists the phases the code reports, in order', () => {
  const control = fs.readFileSync(path.join(PROJECT, 'src', 'run', 'control.ts'), 'utf8');
  const m = /export const PHASES = \[([^\]]*)\]/.exec(control);
  assert.ok(m, 'PHASES not found in src/run/control.ts');
  const phases = [...m[1].matchAll(/'([a-z]+)'/g)].map((x) => x[1]);
  const start = doc.indexOf('## The phases');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const lines = section
    .split('\n')
    .filter((l) => /^\| [a-z]+ \|/.test(l) && !l.startsWith('| phase |'));
  const rows = lines.map((l) => /^\| ([a-z]+) \|/.exec(l)[1]);
  // Every reported phase is a row, in the same order (the page also lists resolve, finish, report).
  const reported = rows.filter((r) => phases.includes(r));
  assert.deepEqual(reported, phases);
  // Every row's first module exists and is a phase module of src/run/ or the planner.
  for (const line of lines) {
    const mod = /`(src\/[^`]+\.ts)`/.exec(line);
    assert.ok(mod, `no module for: ${line}`);
    assert.ok(fs.existsSync(path.join(PROJECT, mod[1])), mod[1]);
  }
});
