#!/usr/bin/env node
// A network filesystem on this machine, and fresh checkouts on it by worker count.
//
//   node netfs.mjs [--trials 3] [--workers 1,2,4,8,16,32] [--repos small1k,small]
//                  [--tools pcheckout,git] [--hold (keep the rig up until Ctrl-C)]
//
// The rig: an sshd in its own network namespace, reached over a veth pair with two private
// addresses (10.213.<k>.1 here, 10.213.<k>.2 in the namespace — traffic stays inside the pair),
// and a directory of this machine exported by it, mounted with sshfs. The repositories, `.git`
// included, are on the mount: clones are made on the server's side of the export (the files
// appear through the mount, nothing is copied over ssh), then checked out through the mount.
//
// sshfs options (fixed, so runs compare): sshfs 3's defaults for caching (dir_cache=yes,
// attributes cached 20 s) and one ssh connection (max_conns=1), no compression, an
// ed25519 key made for the run, no host key check, ServerAliveInterval unset.
//
// Repositories: `small1k`, 1,000 files (1–12 KB, one commit), built here; `small`, the bench
// corpus of ~5,000 files with 3 commits (corpus.mjs). Each trial is a fresh `clone
// --no-checkout`, then one of
//   pcheckout           node ../dist/cli.cjs --json <dir>            (default options)
//   pcheckout-wN        the same with --workers N
//   git-wN              git -c checkout.workers=N read-tree -u --reset HEAD
// timed as wall time of the process. Needs root (ip netns, mount); apt-get installs
// openssh-server and sshfs when missing. Everything is torn down at the end, also on Ctrl-C.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureCorpus } from './corpus.mjs';
import { BENCH_GIT_ENV } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(HERE, '..', 'dist', 'cli.cjs');
const ENV = BENCH_GIT_ENV;

const { values: opt } = parseArgs({
  options: {
    trials: { type: 'string', default: '3' },
    workers: { type: 'string', default: '1,2,4,8,16,32' },
    repos: { type: 'string', default: 'small1k,small' },
    tools: { type: 'string', default: 'pcheckout,git' },
    hold: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  process.stdout.write(
    'usage: node netfs.mjs [--trials 3] [--workers 1,2,4,8,16,32] [--repos small1k,small] [--tools pcheckout,git]\n',
  );
  process.exit(0);
}
if (process.getuid?.() !== 0) {
  process.stderr.write('netfs.mjs: needs root (ip netns, mount)\n');
  process.exit(1);
}

const log = (msg) => process.stderr.write(`[netfs] ${msg}\n`);
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'pipe', ...opts });

function ensurePackages() {
  const need = [];
  if (!fs.existsSync('/usr/sbin/sshd')) need.push('openssh-server');
  if (!fs.existsSync('/usr/bin/sshfs')) need.push('sshfs');
  if (need.length === 0) return;
  log(`apt-get install ${need.join(' ')}`);
  sh('apt-get', ['update', '-qq']);
  sh('apt-get', ['install', '-y', '-qq', ...need], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

// ---------------------------------------------------------------------------------------------
// The rig, and its teardown (in reverse order of what was set up)

const k = 1 + (process.pid % 250);
const NS = `pcnetfs${process.pid}`;
const HOST_IF = `pcn${process.pid}a`.slice(0, 15);
const NS_IF = `pcn${process.pid}b`.slice(0, 15);
const HOST_ADDR = `10.213.${k}.1`;
const SERVER_ADDR = `10.213.${k}.2`;
const work = fs.mkdtempSync('/var/tmp/pcheckout-netfs-');
const exportDir = path.join(work, 'export');
const mnt = path.join(work, 'mnt');
const undo = [];
let sshd;
let current; // the trial's child process while one runs

function teardown() {
  current?.kill('SIGKILL'); // a trial still running would keep the mount busy
  while (undo.length > 0) {
    const step = undo.pop();
    try {
      step();
    } catch (err) {
      log(`teardown: ${String(err.message ?? err).split('\n')[0]}`);
    }
  }
  try {
    fs.rmSync(work, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    log(`teardown: could not remove ${work}: ${err.message}`);
  }
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    log(`${sig}: tearing down`);
    teardown();
    process.exit(130);
  });
}

function setUp() {
  ensurePackages();
  fs.mkdirSync(exportDir);
  fs.mkdirSync(mnt);
  sh('ip', ['netns', 'add', NS]);
  undo.push(() => sh('ip', ['netns', 'del', NS])); // takes the veth pair with it
  undo.push(() => {
    // sshd's session processes outlive the listener: end whatever still runs in the namespace.
    const pids = String(sh('ip', ['netns', 'pids', NS]))
      .split('\n')
      .filter(Boolean);
    for (const pid of pids) spawnSync('kill', [pid], { stdio: 'ignore' });
  });
  sh('ip', ['link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', NS_IF]);
  undo.push(() => spawnSync('ip', ['link', 'del', HOST_IF], { stdio: 'ignore' }));
  sh('ip', ['link', 'set', NS_IF, 'netns', NS]);
  sh('ip', ['addr', 'add', `${HOST_ADDR}/30`, 'dev', HOST_IF]);
  sh('ip', ['link', 'set', HOST_IF, 'up']);
  const inNs = (...args) => sh('ip', ['netns', 'exec', NS, ...args]);
  inNs('ip', 'addr', 'add', `${SERVER_ADDR}/30`, 'dev', NS_IF);
  inNs('ip', 'link', 'set', NS_IF, 'up');
  inNs('ip', 'link', 'set', 'lo', 'up');

  const keys = path.join(work, 'keys');
  fs.mkdirSync(keys, { mode: 0o700 });
  sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'host')]);
  sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'client')]);
  fs.copyFileSync(path.join(keys, 'client.pub'), path.join(keys, 'authorized_keys'));
  const config = path.join(work, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `ListenAddress ${SERVER_ADDR}`,
      'Port 22',
      `HostKey ${path.join(keys, 'host')}`,
      `AuthorizedKeysFile ${path.join(keys, 'authorized_keys')}`,
      `PidFile ${path.join(work, 'sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'Subsystem sftp internal-sftp',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  fs.mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation directory
  sshd = spawn('ip', ['netns', 'exec', NS, '/usr/sbin/sshd', '-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  sshd.stderr.on('data', (d) => log(`sshd: ${String(d).trim()}`));
  undo.push(() => sshd.kill('SIGTERM'));

  const sshOpts = [
    `IdentityFile=${path.join(keys, 'client')}`,
    'StrictHostKeyChecking=no',
    'UserKnownHostsFile=/dev/null',
    'BatchMode=yes',
    'Compression=no',
    'LogLevel=ERROR',
  ];
  // sshd may take a moment to listen: retry the mount a few times.
  for (let attempt = 1; ; attempt++) {
    const r = spawnSync(
      'sshfs',
      [`root@${SERVER_ADDR}:${exportDir}`, mnt, '-o', sshOpts.join(',')],
      { encoding: 'utf8' },
    );
    if (r.status === 0) break;
    if (attempt === 20) throw new Error(`sshfs failed: ${r.stderr}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
  }
  undo.push(() => {
    if (spawnSync('fusermount', ['-u', mnt], { stdio: 'ignore' }).status !== 0)
      sh('umount', ['-l', mnt]);
  });
  const line = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === mnt);
  log(`mounted: ${line}`);
}

// ---------------------------------------------------------------------------------------------
// Repositories (bare sources on the local disk; clones made inside the export)

const git = (cwd, ...args) => sh('git', args, { cwd, env: ENV });

function buildSmall1k(dir) {
  if (fs.existsSync(path.join(dir, 'done'))) return path.join(dir, 'source.git');
  fs.rmSync(dir, { recursive: true, force: true });
  const tree = path.join(dir, 'tree');
  fs.mkdirSync(tree, { recursive: true });
  git(tree, 'init', '-q', '-b', 'main');
  for (let i = 0; i < 1000; i++) {
    const sub = path.join(tree, `m${i % 7}`, `p${Math.floor(i / 40)}`);
    fs.mkdirSync(sub, { recursive: true });
    const size = 1024 + ((i * 2654435761) % 11264);
    let text = '';
    for (let n = 0; text.length < size; n++) {
      text += `${createHash('sha1').update(`${i}/${n}`).digest('hex')} line ${n}\n`;
    }
    fs.writeFileSync(path.join(sub, `file${i}.c`), text.slice(0, size));
  }
  git(tree, 'add', '-A');
  git(tree, 'commit', '-qm', 'small1k');
  git(dir, 'clone', '-q', '--bare', tree, 'source.git');
  git(path.join(dir, 'source.git'), 'gc', '-q');
  fs.rmSync(tree, { recursive: true, force: true });
  fs.writeFileSync(path.join(dir, 'done'), '');
  return path.join(dir, 'source.git');
}

async function sources(names) {
  const out = {};
  for (const name of names) {
    if (name === 'small1k') {
      const cache = process.env.PCHECKOUT_BENCH_CACHE || '/var/tmp/pcheckout-bench';
      // Not `small1k`: that is corpus.mjs's own (another tree), which this builder would delete.
      out[name] = buildSmall1k(path.join(cache, 'netfs-small1k'));
    } else {
      out[name] = (await ensureCorpus(name)).repo;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Trials

/** A child run asynchronously, so a signal is handled (and the rig torn down) between trials. */
function runChild(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    current = child;
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (status) => {
      current = undefined;
      resolve({
        status,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      });
    });
  });
}

let serial = 0;
async function trial(source, tool) {
  const name = `t${++serial}`;
  // Made on the server's side: the clone is not what is measured.
  git(exportDir, 'clone', '-q', '--no-checkout', source, name);
  const dir = path.join(mnt, name);
  let cmd;
  let args;
  if (tool.kind === 'pcheckout') {
    cmd = process.execPath;
    args = [CLI, '--json', ...(tool.workers ? ['--workers', String(tool.workers)] : []), dir];
  } else {
    cmd = 'git';
    args = ['-c', `checkout.workers=${tool.workers}`, 'read-tree', '-u', '--reset', 'HEAD'];
  }
  const started = process.hrtime.bigint();
  const r = await runChild(cmd, args, dir);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0) throw new Error(`${tool.id} failed: ${r.stderr}`);
  const summary = tool.kind === 'pcheckout' ? JSON.parse(r.stdout) : null;
  fs.rmSync(path.join(exportDir, name), { recursive: true, force: true });
  return { seconds, summary };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  const counts = opt.workers.split(',').map(Number);
  const tools = [];
  const kinds = opt.tools.split(',');
  if (kinds.includes('pcheckout')) tools.push({ id: 'pcheckout', kind: 'pcheckout' });
  for (const w of counts) {
    if (kinds.includes('pcheckout'))
      tools.push({ id: `pcheckout-w${w}`, kind: 'pcheckout', workers: w });
    if (kinds.includes('git')) tools.push({ id: `git-w${w}`, kind: 'git', workers: w });
  }
  const repos = await sources(opt.repos.split(','));
  setUp();
  if (opt.hold) {
    // Keep the rig up for manual runs: the export is writable here, the mount shows it.
    process.stdout.write(`export ${exportDir}\nmount ${mnt}\n`);
    for (const [repo, source] of Object.entries(repos)) process.stdout.write(`${repo} ${source}\n`);
    await new Promise(() => {}); // until SIGINT/SIGTERM, which tear down
  }
  const trials = Number(opt.trials);
  for (const [repo, source] of Object.entries(repos)) {
    const times = Object.fromEntries(tools.map((t) => [t.id, []]));
    let detected;
    const phases = [];
    for (let t = 0; t < trials; t++) {
      for (const tool of tools) {
        const r = await trial(source, tool);
        times[tool.id].push(r.seconds);
        if (r.summary && !tool.workers) {
          detected = r.summary;
          phases.push(r.summary.timings);
        }
        log(`${repo} trial ${t + 1} ${tool.id}: ${r.seconds.toFixed(2)} s`);
      }
    }
    const med = Object.fromEntries(tools.map((t) => [t.id, median(times[t.id])]));
    const pcBest = Math.min(
      ...tools.filter((t) => t.id.startsWith('pcheckout-')).map((t) => med[t.id]),
    );
    const git1 = med['git-w1'];
    const lines = [
      `\n${repo}: ${detected?.entries ?? '?'} entries, ${trials} trials (medians), ` +
        `load average ${os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(', ')}`,
    ];
    if (detected) {
      lines.push(
        `pcheckout default: filesystem ${detected.filesystem.type} (network ${detected.filesystem.network}), ` +
          `workers ${detected.workers}, pool ${detected.pool.used ? detected.pool.workers : 'unused'}; ` +
          `phases (median ms): ${['plan', 'write', 'index', 'racyWait']
            .map((k) => `${k} ${median(phases.map((p) => p[k])).toFixed(0)}`)
            .join(', ')}`,
      );
    }
    lines.push('', '| workers | pcheckout s | git s |', '| --- | --- | --- |');
    for (const w of counts) {
      const p = med[`pcheckout-w${w}`];
      const g = med[`git-w${w}`];
      lines.push(`| ${w} | ${p?.toFixed(2) ?? '-'} | ${g?.toFixed(2) ?? '-'} |`);
    }
    if (med.pcheckout !== undefined) {
      lines.push(
        `| default (${detected?.workers}) | ${med.pcheckout.toFixed(2)} | |`,
        '',
        `pcheckout default / its best: ${(med.pcheckout / pcBest).toFixed(2)}` +
          (git1 ? `; / git with 1 worker: ${(med.pcheckout / git1).toFixed(2)}` : ''),
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
} finally {
  teardown();
}
