// External filter drivers (filter.<driver>.smudge/clean one-shot commands and long-running
// filter.<driver>.process drivers with delay), compared with git's own checkout of the same
// commit under the same config: bytes on disk, the index, the requests each driver received,
// `git status` clean. Filtered files are written on the main thread, the rest by the pool.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { FilterSession } from '../dist/write/filters.js';
import {
  assertIndexStatMatchesDisk,
  assertPoolRule,
  assertSummaryShape,
} from './helpers/compare.mjs';
import { ROOT, Repo, freshClone, git, gitTry } from './helpers/git.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';
import { assertSameSnapshot, worktreeSnapshot } from './helpers/twin.mjs';

// A long-running driver: rot13 both ways; logs each request to the file named first.
// Options: --delay (delays every blob it may, hands them back one per list_available_blobs),
// --error=<path> / --abort=<path> (answers status=error / abort for that path's smudge).
const PROCESS_DRIVER = `
const fs = require('fs');
const [logFile, ...opts] = process.argv.slice(2);
const opt = (k) => opts.find((o) => o.startsWith(k))?.slice(k.length);
const log = (s) => fs.appendFileSync(logFile, s + '\\n');
let buf = Buffer.alloc(0), wake = null;
process.stdin.on('data', (d) => { buf = Buffer.concat([buf, d]); wake?.(); });
process.stdin.on('end', () => { log('EOF'); process.exit(0); });
async function pkt() {
  for (;;) {
    if (buf.length >= 4) {
      const n = parseInt(buf.subarray(0, 4).toString(), 16);
      if (n === 0) { buf = buf.subarray(4); return null; }
      if (buf.length >= n) { const p = buf.subarray(4, n); buf = buf.subarray(n); return p; }
    }
    await new Promise((r) => (wake = r));
  }
}
async function list() { const l = []; for (let p; (p = await pkt()); ) l.push(p.toString('latin1').replace(/\\n$/, '')); return l; }
async function content() { const c = []; for (let p; (p = await pkt()); ) c.push(p); return Buffer.concat(c); }
const enc = (p) => p === null ? Buffer.from('0000') : Buffer.concat([Buffer.from((p.length + 4).toString(16).padStart(4, '0')), p]);
const send = (...ps) => process.stdout.write(Buffer.concat(ps.map((p) => enc(typeof p === 'string' ? Buffer.from(p, 'latin1') : p))));
const sendData = (d) => { const ps = []; for (let i = 0; i < d.length; i += 65516) ps.push(d.subarray(i, i + 65516)); return ps; };
const rot13 = (b) => Buffer.from(b.map((c) => (c >= 97 && c <= 122 ? ((c - 84) % 26) + 97 : c >= 65 && c <= 90 ? ((c - 52) % 26) + 65 : c)));
(async () => {
  log('HELLO ' + (await list()).join(' '));
  send('git-filter-server\\n', 'version=2\\n', null);
  log('CAPS ' + (await list()).join(' '));
  send('capability=clean\\n', 'capability=smudge\\n', 'capability=delay\\n', null);
  const delayed = new Map();
  for (;;) {
    const meta = await list();
    log(meta.join(' '));
    const kv = Object.fromEntries(meta.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    if (kv.command === 'list_available_blobs') {
      const ready = [...delayed.keys()].filter((p) => !delayed.get(p).listed).slice(0, 1);
      for (const p of ready) delayed.get(p).listed = true;
      send(...ready.map((p) => 'pathname=' + p + '\\n'), null, 'status=success\\n', null);
      continue;
    }
    const data = await content();
    if (kv.command === 'smudge' && opt('--error=') === kv.pathname) { send('status=error\\n', null); continue; }
    if (kv.command === 'smudge' && opt('--abort=') === kv.pathname) { send('status=abort\\n', null); continue; }
    if (kv['can-delay'] === '1' && opts.includes('--delay')) {
      delayed.set(kv.pathname, { data: rot13(data) });
      send('status=delayed\\n', null);
      continue;
    }
    const out = delayed.get(kv.pathname)?.data ?? rot13(data);
    delayed.delete(kv.pathname);
    send('status=success\\n', null, ...sendData(out), null, null);
  }
})();
`;

// A one-shot command: logs its argument (the %f git quoted), rot13 from stdin to stdout.
const ONE_SHOT = `printf '%s\\n' "$1" >> "$0.log"; tr a-zA-Z n-za-mN-ZA-M`;

let driverFile;
let oneShotFile;

/** A repository with filtered files among plain ones (names with a space and a quote too). */
function buildRepo() {
  const repo = Repo.init('filters');
  repo.write('.gitattributes', '*.r filter=rot\n*.s filter=shot\n*.n filter=nope\n');
  repo.write('a.r', 'Hello, filtered world\n');
  repo.write("d d/it's.r", 'Second filtered file\n');
  repo.write('big.r', `${'x'.repeat(70_000)}\nend of a file longer than one packet\n`);
  repo.write('one.s', 'one-shot content\n');
  repo.write("sub/it's two.s", 'two\n', { exec: true });
  repo.write('plain.n', 'a driver nobody configured\n');
  for (let i = 0; i < 8; i++) repo.write(`p/${i}.txt`, `plain ${i}\n`);
  repo.commit('filtered');
  repo.gc();
  return repo;
}

/** A fresh clone with the drivers configured; each logs to its own file in the clone's .git. */
function clone(src, config) {
  const dir = freshClone(src);
  for (const [k, v] of Object.entries(config(dir))) git(dir, ['config', k, v]);
  return dir;
}

const processDriver = (dir, ...opts) =>
  [
    process.execPath,
    driverFile,
    path.join(dir, '.git', 'filter.log'),
    ...opts.map((o) => `"${o}"`),
  ].join(' ');

/** The requests a driver logged in `dir` (empty when it never ran). */
function driverLog(dir) {
  const file = path.join(dir, '.git', 'filter.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'latin1').trimEnd().split('\n') : [];
}

/** git's own checkout in a twin clone: { dir, status } (the worktree is left as git left it). */
function gitCheckout(src, config, args = ['reset', '-q', '--hard']) {
  const dir = clone(src, config);
  const r = gitTry(dir, [
    '-c',
    'checkout.workers=2',
    '-c',
    'checkout.thresholdForParallelism=0',
    ...args,
  ]);
  return { dir, status: r.status, stderr: r.stderr };
}

/** pcheckout's worktree and index equal git's, and git sees nothing modified. */
function assertSameAsGit(dir, gitDir, { statusClean = true } = {}) {
  assertSameSnapshot(worktreeSnapshot(dir), worktreeSnapshot(gitDir), 'worktree vs git');
  assert.equal(git(dir, ['ls-files', '-s']), git(gitDir, ['ls-files', '-s']), 'index entries');
  assertIndexStatMatchesDisk(dir);
  if (statusClean) assert.equal(git(dir, ['status', '--porcelain']), '', 'git status');
}

/** The regular files of a worktree snapshot. */
const files = (dir) => new Map([...worktreeSnapshot(dir)].filter(([, e]) => e.type === 'file'));

const OPTS = { workers: 2, threshold: 0, racyWait: false };

describe('external filters', () => {
  let src;
  before(() => {
    driverFile = path.join(ROOT, 'filter-driver.cjs');
    fs.writeFileSync(driverFile, PROCESS_DRIVER);
    oneShotFile = path.join(ROOT, 'one-shot.sh');
    fs.writeFileSync(oneShotFile, ONE_SHOT);
    src = buildRepo();
  });

  test('one-shot smudge and clean commands: %f quoted, the plain files still on the pool', async () => {
    const config = () => ({
      'filter.shot.smudge': `sh ${oneShotFile} %f`,
      'filter.shot.clean': 'tr a-zA-Z n-za-mN-ZA-M',
    });
    fs.rmSync(`${oneShotFile}.log`, { force: true });
    const ref = gitCheckout(src, config);
    assert.equal(ref.status, 0, ref.stderr);
    const gitCalls = fs.readFileSync(`${oneShotFile}.log`, 'utf8');
    fs.rmSync(`${oneShotFile}.log`);
    const dir = clone(src, config);
    const s = await checkout(dir, OPTS);
    assertSameAsGit(dir, ref.dir);
    assert.equal(fs.readFileSync(`${oneShotFile}.log`, 'utf8'), gitCalls, 'the commands git ran');
    assert.equal(fs.readFileSync(path.join(dir, 'one.s'), 'utf8'), 'bar-fubg pbagrag\n');
    assert.deepEqual(s.filters, { files: 2, delayed: 0, failed: [] });
    assertSummaryShape(s);
    assertPoolRule(s, 2, 0);
    assert.equal(s.pool.files, s.files - 2, 'every other file on the pool');
  });

  test('a long-running process: one process, the requests git sends, shut down cleanly', async () => {
    const config = (dir) => ({ 'filter.rot.process': processDriver(dir) });
    const ref = gitCheckout(src, config);
    assert.equal(ref.status, 0, ref.stderr);
    const dir = clone(src, config);
    const s = await checkout(dir, OPTS);
    const log = driverLog(dir); // before git status asks the driver to clean
    assertSameAsGit(dir, ref.dir);
    assert.deepEqual(log, driverLog(ref.dir), 'the requests the driver received, in order');
    assert.equal(log.filter((l) => l.startsWith('HELLO')).length, 1, 'one process');
    assert.equal(log.at(-1), 'EOF', 'shut down by closing its input');
    assert.match(
      log.join('\n'),
      /command=smudge pathname=a\.r ref=refs\/heads\/main treeish=[0-9a-f]{40} blob=[0-9a-f]{40} can-delay=1/,
    );
    assert.equal(s.filters.files, 3);
    assert.equal(s.pool.files, s.files - 3);
  });

  test('a delaying process filter mixed with plain files', async () => {
    const config = (dir) => ({ 'filter.rot.process': processDriver(dir, '--delay') });
    const ref = gitCheckout(src, config);
    assert.equal(ref.status, 0, ref.stderr);
    const dir = clone(src, config);
    const s = await checkout(dir, OPTS);
    const log = driverLog(dir); // before git status asks the driver to clean
    assertSameAsGit(dir, ref.dir);
    assert.deepEqual(log, driverLog(ref.dir), 'requests, list_available_blobs rounds, retries');
    assert.ok(log.filter((l) => l === 'command=list_available_blobs').length > 3);
    assert.deepEqual([s.filters.files, s.filters.delayed], [3, 3]);
    assert.equal(s.pool.used, true);
  });

  test('a required filter that fails stops the checkout: coded error, index untouched', async () => {
    for (const config of [
      (dir) => ({
        'filter.rot.process': processDriver(dir, "--error=d d/it's.r"),
        'filter.rot.required': 'true',
      }),
      () => ({ 'filter.shot.smudge': 'no-such-filter-command %f', 'filter.shot.required': 'true' }),
    ]) {
      const ref = gitCheckout(src, config);
      assert.equal(ref.status, 128, 'git dies');
      const dir = clone(src, config);
      const before = targetState(dir);
      const err = await assertRejectsWith(
        PcheckoutError,
        () => checkout(dir, OPTS),
        'ERR_FILTER_FAILED',
      );
      assert.match(err.message, /smudge filter (rot|shot) failed/);
      const after = targetState(dir);
      assert.deepEqual(
        [after.index, after.indexLock, after.head],
        [before.index, null, before.head],
      );
      // What git wrote before it died (the filtered files before the failing one), no more.
      // (Directories are made up front here, by git as it goes: only files are compared.)
      assertSameSnapshot(files(dir), files(ref.dir), 'files vs git');
    }
  });

  test('a filter that is not required and fails leaves the content as it is', async () => {
    const config = (dir) => ({
      'filter.shot.smudge': 'tr a-z A-Z; exit 3',
      'filter.rot.process': processDriver(dir, '--abort=a.r'),
    });
    const ref = gitCheckout(src, config);
    assert.equal(ref.status, 0, ref.stderr);
    assert.match(ref.stderr, /external filter 'tr a-z A-Z; exit 3' failed 3/);
    const dir = clone(src, config);
    const s = await checkout(dir, OPTS);
    assert.deepEqual(driverLog(dir), driverLog(ref.dir), 'no request after the abort');
    assertSameAsGit(dir, ref.dir, { statusClean: false });
    assert.equal(fs.readFileSync(path.join(dir, 'one.s'), 'utf8'), 'one-shot content\n');
    assert.deepEqual(s.filters.failed.map((f) => f.path).sort(), [
      'a.r',
      'big.r',
      "d d/it's.r",
      'one.s',
      "sub/it's two.s",
    ]);
  });

  test('clean direction: a touched filtered file is cleaned before hashing, so a switch goes on', async () => {
    const repo = Repo.init('filters-switch');
    repo.write('.gitattributes', '*.r filter=rot\n');
    repo.write('f.r', 'first version\n');
    repo.write('kept.r', 'the same in both\n');
    repo.write('x.txt', 'x\n');
    repo.commit('one');
    repo.branch('next');
    repo.switchTo('next');
    repo.write('f.r', 'second version\n');
    repo.write('x.txt', 'x changed\n');
    repo.commit('two');
    repo.switchTo('main');
    const config = (dir) => ({ 'filter.rot.process': processDriver(dir) });
    const twins = [clone(repo, config), clone(repo, config)];
    for (const dir of twins) {
      git(dir, ['reset', '-q', '--hard']);
      // Stat-dirty, content unchanged: only its clean filter tells it is not modified.
      const past = new Date(Date.now() - 3_600_000);
      fs.utimesSync(path.join(dir, 'f.r'), past, past);
      fs.rmSync(path.join(dir, '.git', 'filter.log'));
    }
    const [gitDir, dir] = twins;
    const r = gitTry(gitDir, ['checkout', '-q', 'next']);
    assert.equal(r.status, 0, r.stderr);
    await checkout(dir, { ...OPTS, ref: 'next' });
    assert.ok(driverLog(dir).includes('command=clean pathname=f.r'), driverLog(dir).join('\n'));
    const smudges = (d) => driverLog(d).filter((l) => l.startsWith('command=smudge'));
    assert.deepEqual(smudges(dir), smudges(gitDir), 'smudge requests (ref=refs/heads/next)');
    assertSameAsGit(dir, gitDir);
    assert.equal(git(dir, ['rev-parse', 'HEAD']), git(gitDir, ['rev-parse', 'HEAD']));
  });

  test('eol=crlf and ident before the smudge filter, their clean side after the clean filter', async () => {
    // git's order on checkout: ident, eol, encoding, then the smudge filter; on the way back
    // (the dirty check of a switch): the clean filter, then encoding, eol, ident.
    const repo = Repo.init('filters-conversions');
    repo.write(
      '.gitattributes',
      '*.r filter=rot eol=crlf ident\n*.s filter=shot text eol=crlf\n*.t eol=crlf\n',
    );
    repo.write('a.r', 'line one\n$Id$\nline three\n');
    repo.write('kept.r', 'the same $Id$ in both\n');
    repo.write('b.s', 'one-shot\ntext\n');
    repo.write('c.t', 'crlf only\n');
    for (let i = 0; i < 4; i++) repo.write(`p/${i}.txt`, `plain ${i}\n`);
    repo.commit('one');
    repo.branch('next');
    repo.switchTo('next');
    repo.write('a.r', 'line one\n$Id$\nline three, changed\n');
    repo.write('b.s', 'one-shot\ntext, changed\n');
    repo.commit('two');
    repo.switchTo('main');
    const config = (dir) => ({
      'filter.rot.process': processDriver(dir),
      'filter.shot.smudge': 'tr a-zA-Z n-za-mN-ZA-M',
      'filter.shot.clean': 'tr a-zA-Z n-za-mN-ZA-M',
    });

    const ref = gitCheckout(repo, config);
    assert.equal(ref.status, 0, ref.stderr);
    const dir = clone(repo, config);
    const s = await checkout(dir, OPTS);
    const log = driverLog(dir); // before git status asks the driver to clean
    assertSameAsGit(dir, ref.dir);
    assert.deepEqual(log, driverLog(ref.dir), 'the requests the driver received');
    // CRLF and the expanded id went through rot13: the filter saw the converted blob.
    const a = fs.readFileSync(path.join(dir, 'a.r'), 'latin1');
    assert.match(a, /^yvar bar\r\n\$Vq: [0-9n-s]{40} \$\r\nyvar guerr\r\n$/);
    assert.equal(fs.readFileSync(path.join(dir, 'b.s'), 'latin1'), 'bar-fubg\r\ngrkg\r\n');
    assert.deepEqual([s.filters.files, s.pool.files], [3, s.files - 3]);

    // Stat-dirty, content unchanged: only clean filter + eol + ident tell they are not modified.
    const twins = [clone(repo, config), clone(repo, config)];
    for (const d of twins) {
      git(d, ['reset', '-q', '--hard']);
      const past = new Date(Date.now() - 3_600_000);
      for (const f of ['a.r', 'b.s', 'kept.r']) fs.utimesSync(path.join(d, f), past, past);
      fs.rmSync(path.join(d, '.git', 'filter.log'));
    }
    const [gitDir, mine] = twins;
    const r = gitTry(gitDir, ['checkout', '-q', 'next']);
    assert.equal(r.status, 0, r.stderr);
    await checkout(mine, { ...OPTS, ref: 'next' });
    assert.ok(driverLog(mine).includes('command=clean pathname=a.r'), driverLog(mine).join('\n'));
    assertSameAsGit(mine, gitDir);
  });

  test('a required driver with nothing to run fails an entry git cannot stream', async () => {
    const repo = Repo.init('filters-required-none');
    repo.write('.gitattributes', '*.n filter=nope\n*.u filter=nope text=auto\n');
    repo.write('a.n', 'streamed\n');
    repo.write('b.u', 'converted in core\n');
    repo.commit('one');
    const config = () => ({ 'filter.nope.required': 'true' });
    // git's sequential checkout (its default, checkout.workers=1) dies; its parallel workers are
    // never told the driver and write the file: pcheckout fails it, whatever the pool does.
    const ref = gitCheckout(repo, config, ['-c', 'checkout.workers=1', 'reset', '-q', '--hard']);
    assert.equal(ref.status, 128, 'git dies');
    assert.match(ref.stderr, /b\.u: smudge filter nope failed/);
    const dir = clone(repo, config);
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, OPTS),
      'ERR_FILTER_FAILED',
    );
    assert.match(err.message, /^b\.u: smudge filter nope failed/);
  });

  test('a driver named by an attribute but not configured leaves the file unfiltered', async () => {
    // A driver with nothing to run is no filter, even when required (git streams the file).
    const config = () => ({ 'filter.nope.required': 'true' });
    const ref = gitCheckout(src, config);
    assert.equal(ref.status, 0, ref.stderr);
    const dir = clone(src, config);
    const s = await checkout(dir, OPTS);
    assertSameSnapshot(worktreeSnapshot(dir), worktreeSnapshot(ref.dir), 'worktree vs git');
    assertIndexStatMatchesDisk(dir);
    assert.deepEqual(s.filters, { files: 0, delayed: 0, failed: [] });
    assert.equal(s.pool.files, s.files);
  });

  test(
    'requests that overlap on one session: one process, each answer to its own request',
    { timeout: 30_000 },
    async () => {
      // Users of one session that overlap (one call's checks ask one after another today): a
      // request before the handshake ends, or while another waits for its answer. One process
      // starts and the conversations take turns.
      const dir = fs.mkdtempSync(path.join(ROOT, 'overlap-'));
      fs.mkdirSync(path.join(dir, '.git'));
      const driver = {
        name: 'rot',
        smudge: undefined,
        clean: undefined,
        process: processDriver(dir),
        required: true,
      };
      const session = new FilterSession(new Map([['rot', driver]]), dir, () => process.env);
      const inputs = Array.from({ length: 8 }, (_, n) =>
        Buffer.from(`file ${n} `.repeat(20_000 * n + 1)),
      );
      const cleaned = await Promise.all(inputs.map((b, n) => session.clean('rot', `f${n}.r`, b)));
      await session.close();
      const rot13 = (b) =>
        Buffer.from(b.map((c) => (c >= 97 && c <= 122 ? ((c - 84) % 26) + 97 : c)));
      cleaned.forEach((out, n) => assert.ok(out.equals(rot13(inputs[n])), `f${n}.r's own answer`));
      const log = driverLog(dir);
      assert.equal(log.filter((l) => l.startsWith('HELLO')).length, 1, 'one process');
      assert.deepEqual(
        log.filter((l) => l.startsWith('command=')),
        inputs.map((_, n) => `command=clean pathname=f${n}.r`),
        'one request after another, in the order asked',
      );
      assert.equal(log.at(-1), 'EOF');
      assert.deepEqual(session.failures, []);
    },
  );
});
