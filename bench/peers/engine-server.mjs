#!/usr/bin/env node
// A warm pcheckout engine (createEngine) in one long-lived process, for the bench: one JSON
// request a line on stdin — { id, call: 'checkout', repo, options } — and one JSON answer a
// line on stdout — { id, ok, ms, summary } or { id, ok: false, error } — in order. The engine
// lives until stdin ends. PCHECKOUT_DIST names the engine's dist/index.js.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const dist = process.env.PCHECKOUT_DIST;
if (!dist) {
  process.stderr.write('engine-server: set PCHECKOUT_DIST to pcheckout/dist/index.js\n');
  process.exit(2);
}
const { createEngine } = await import(pathToFileURL(dist).href);
const engine = createEngine();
const answer = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { id, call, repo, options } = JSON.parse(line);
  const started = performance.now();
  try {
    if (call !== 'checkout') throw new Error(`unknown call ${call}`);
    const summary = await engine.checkout(repo, options);
    answer({ id, ok: true, ms: performance.now() - started, summary });
  } catch (err) {
    answer({ id, ok: false, error: `${err.code ?? ''} ${err.message}`.trim() });
  }
}
await engine.close();
