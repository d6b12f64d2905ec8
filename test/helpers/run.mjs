// Running the built engine out of process: the CLI, and checkout() in a child node process
// (so a native crash is reported as a failed assertion, not a dead test file).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitEnv, worktreeEntries } from './git.mjs';

export const PROJECT = fileURLToPath(new URL('../../', import.meta.url));
export const DIST_INDEX = path.join(PROJECT, 'dist', 'index.js');
export const CLI = path.join(PROJECT, 'dist', 'cli.cjs');
export const ADDON = path.join(PROJECT, 'build', 'Release', 'pcheckout.node');

/** Run `node dist/cli.cjs ...args`: { status, signal, stdout, stderr }. */
export function runCli(args, { cwd = PROJECT, timeout = 120_000 } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: gitEnv,
    encoding: 'utf8',
    timeout,
    maxBuffer: 1 << 26,
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const CHILD = `
const { checkout, PcheckoutError } = await import(process.env.PCHECKOUT_TEST_DIST);
const { repo, opts } = JSON.parse(process.env.PCHECKOUT_TEST_ARGS);
let out;
try {
  out = { ok: true, summary: await checkout(repo, opts) };
} catch (err) {
  out = {
    ok: false,
    error: {
      isPcheckoutError: err instanceof PcheckoutError,
      name: err?.name,
      code: err?.code,
      message: String(err?.message ?? err),
    },
  };
}
process.stdout.write('@@RESULT@@' + JSON.stringify(out) + '\\n');
`;

/**
 * checkout(repo, opts) in a child process. Returns { status, signal, stderr, result } where
 * result is { ok: true, summary } or { ok: false, error: { isPcheckoutError, name, code,
 * message } }, or null when the child died before reporting.
 */
export function checkoutInChild(repo, opts = {}, { timeout = 120_000, env = {} } = {}) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], {
    env: {
      ...gitEnv,
      ...env,
      PCHECKOUT_TEST_DIST: DIST_INDEX,
      PCHECKOUT_TEST_ARGS: JSON.stringify({ repo, opts }),
    },
    encoding: 'utf8',
    timeout,
    maxBuffer: 1 << 26,
  });
  if (r.error) throw r.error;
  const line = r.stdout.split('\n').find((l) => l.startsWith('@@RESULT@@'));
  return {
    status: r.status,
    signal: r.signal,
    stderr: r.stderr,
    result: line ? JSON.parse(line.slice('@@RESULT@@'.length)) : null,
  };
}

/** Describe a child run for assertion messages. */
export function describeChild(r) {
  return `exit ${r.status}, signal ${r.signal}, result ${JSON.stringify(r.result)}, stderr: ${r.stderr.slice(0, 2000)}`;
}

/** Everything in a target's worktree and the index files, for "nothing was written" checks. */
export function targetState(dir) {
  const gitDir = path.join(dir, '.git');
  const read = (f) => (fs.existsSync(f) ? fs.readFileSync(f).toString('base64') : null);
  return {
    worktree: worktreeEntries(dir).sort(),
    index: read(path.join(gitDir, 'index')),
    indexLock: read(path.join(gitDir, 'index.lock')),
    head: read(path.join(gitDir, 'HEAD')),
  };
}

/**
 * `fn()` must return a promise that rejects with a PcheckoutError whose code is one of `codes`
 * (not throw synchronously, not resolve). Returns the error.
 */
export async function assertRejectsWith(PcheckoutError, fn, codes) {
  const expected = [].concat(codes);
  let promise;
  try {
    promise = fn();
  } catch (err) {
    assert.fail(`threw synchronously instead of rejecting: ${err?.code} ${err?.message}`);
  }
  assert.ok(promise && typeof promise.then === 'function', 'did not return a promise');
  let result;
  try {
    result = await promise;
  } catch (err) {
    assert.ok(
      err instanceof PcheckoutError,
      `expected a PcheckoutError (${expected.join(' or ')}), got ${err?.name}: ${err?.code} ${err?.message}`,
    );
    assert.ok(err instanceof Error, 'PcheckoutError must extend Error');
    assert.ok(
      expected.includes(err.code),
      `expected code ${expected.join(' or ')}, got ${err.code}: ${err.message}`,
    );
    assert.ok(typeof err.message === 'string' && err.message.length > 0, 'empty error message');
    return err;
  }
  assert.fail(
    `resolved instead of rejecting with ${expected.join(' or ')}: ${JSON.stringify(result)}`,
  );
}
