// Helpers shared by the benchmark scripts (run.mjs, restore.mjs): timed child processes,
// scratch filesystems (tmpfs, a fresh ext4 image) that are unmounted also on Ctrl-C, and the
// small formatting functions of the tables.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { run } from './corpus.mjs';

export const TIME = '/usr/bin/time';
// A clean git configuration for every tool: no user or system config changes the work done.
export const CLEAN_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
/** git without the machine's config, with a fixed identity for the commits a bench makes. */
export const BENCH_GIT_ENV = {
  ...process.env,
  ...CLEAN_ENV,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@pcheckout.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@pcheckout.invalid',
};

export const say = (msg) => process.stderr.write(`${msg}\n`);

export function firstLine(e) {
  return String(e?.message ?? e)
    .split('\n')
    .find((l) => l.trim())
    ?.slice(0, 300);
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function tryRun(cmd, args, opts) {
  try {
    return (await run(cmd, args, opts)).stdout.trim();
  } catch {
    return null;
  }
}

export function fmt(x, d = 3) {
  return x === null || x === undefined || Number.isNaN(x) ? '—' : Number(x).toFixed(d);
}

export function table(rows, align) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (align[i] === 'l' ? String(c).padEnd(w[i]) : String(c).padStart(w[i])))
        .join('  '),
    )
    .join('\n');
}

/** Installs Debian's `time` (for peak RSS and CPU) if it is missing; false if that fails. */
export function ensureTime() {
  if (fs.existsSync(TIME)) return true;
  say(`${TIME} not found: installing Debian "time" (apt-get install -y time)`);
  try {
    execFileSync('apt-get', ['install', '-y', 'time'], { stdio: 'inherit' });
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Timed children

let current = null; // the timed child, killed on Ctrl-C before a scratch filesystem is unmounted

/**
 * Runs one command under /usr/bin/time in its own process group. Wall time is measured here,
 * around the child; peak RSS and CPU come from time(1) (wait4's rusage). Never rejects:
 * resolves { ok, seconds, rssMB, cpuSeconds, sysSeconds, stdout, stderr, error? }.
 */
export function timedRun(cmd, args, { env, timeoutMs: limit, cwd }) {
  const timeFile = path.join(os.tmpdir(), `pcheckout-bench-time-${process.pid}`);
  fs.rmSync(timeFile, { force: true });
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(TIME, ['-f', '%M %U %S', '-o', timeFile, cmd, ...args], {
      cwd,
      env: { ...process.env, ...CLEAN_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // own process group, so a timeout kills the whole tree
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    current = child;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, limit);
    child.on('error', (e) => {
      clearTimeout(timer);
      current = null;
      resolve({ ok: false, error: `spawn failed: ${e.message}` });
    });
    child.on('close', (code, signal) => {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      current = null;
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString();
      const stderr = Buffer.concat(err).toString();
      let rssMB = null;
      let cpuSeconds = null;
      let sysSeconds = null;
      let timeNote = null;
      try {
        const lines = fs.readFileSync(timeFile, 'utf8').trim().split('\n');
        const [kb, user, sys] = lines.at(-1).split(' ').map(Number);
        if (Number.isFinite(kb)) rssMB = Math.round(kb / 102.4) / 10;
        if (Number.isFinite(user) && Number.isFinite(sys)) {
          cpuSeconds = +(user + sys).toFixed(2);
          sysSeconds = sys;
        }
        if (lines.length > 1) timeNote = lines.slice(0, -1).join(' ');
      } catch {}
      fs.rmSync(timeFile, { force: true });
      const base = { seconds, rssMB, cpuSeconds, sysSeconds, stdout, stderr };
      if (timedOut) {
        resolve({ ...base, ok: false, error: `timeout after ${limit / 1000} s (killed)` });
      } else if (code !== 0 || signal) {
        // A peer's own one-line summary if it printed one; otherwise the last lines that are
        // not stack frames usually hold the message.
        const marked = stderr.match(/^\[peer-error\] (.*)$/m)?.[1];
        const tail =
          marked ??
          stderr
            .split('\n')
            .filter((l) => l.trim() && !/^\s+at /.test(l))
            .slice(-3)
            .join(' | ')
            .slice(-600);
        const why = timeNote || `exit ${signal || code}`;
        resolve({ ...base, ok: false, error: `${why}: ${tail || '(no stderr)'}` });
      } else resolve({ ...base, ok: true });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Clean-up, also on Ctrl-C

const cleanups = [];

/** Registers fn to run at exit or interrupt; returns release(), which runs it now, once. */
export function addCleanup(fn) {
  let done = false;
  const release = () => {
    const i = cleanups.indexOf(release);
    if (i >= 0) cleanups.splice(i, 1);
    if (done) return;
    done = true;
    fn();
  };
  cleanups.push(release);
  return release;
}

export function cleanupAll() {
  while (cleanups.length) {
    try {
      cleanups.at(-1)();
    } catch (e) {
      say(`cleanup: ${firstLine(e)}`);
    }
  }
}

/**
 * On SIGINT/SIGTERM: kill the timed child's process group, run the clean-ups (unmount), then
 * onInterrupt('interrupted') (e.g. save partial results), and exit 130.
 */
export function installSignalHandlers(onInterrupt) {
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      say(`\n${sig}: cleaning up`);
      if (current) {
        try {
          process.kill(-current.pid, 'SIGKILL');
        } catch {}
        // Give the kernel a moment to reap the group so the mount is no longer busy.
        execFileSync('sleep', ['0.5']);
      }
      cleanupAll();
      try {
        onInterrupt?.('interrupted');
      } catch (e) {
        say(`could not save partial results: ${firstLine(e)}`);
      }
      process.exit(130);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Scratch filesystems

// tmpfs mount options: its size, and its inode limit where one is given (tmpfs' own default is
// half the RAM's pages: ~3 million here, fewer than three 1M-file trees side by side).
const tmpfsOptions = (size, inodes) => `size=${size}` + (inodes ? `,nr_inodes=${inodes}` : '');

/**
 * Mounts a tmpfs or a fresh ext4 or XFS (reflink) image (a sparse file under `parent`, loop-mounted) at a new
 * directory under `parent`. Returns { kind, dir, mnt, teardown }; teardown (also registered as a
 * clean-up) unmounts and deletes the directory with the image. Root is needed.
 */
export function mountScratch(
  kind,
  parent,
  { tmpfsSize = '8g', ext4Size = '8g', tmpfsInodes = null } = {},
) {
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, `${kind}-`));
  const mnt = path.join(dir, 'mnt');
  const img = path.join(dir, 'fs.img');
  fs.mkdirSync(mnt);
  try {
    if (kind === 'tmpfs') {
      execFileSync(
        'mount',
        ['-t', 'tmpfs', '-o', tmpfsOptions(tmpfsSize, tmpfsInodes), 'tmpfs', mnt],
        {
          stdio: 'pipe',
        },
      );
    } else if (kind === 'ext4img') {
      // A new ext4 in a file on the disk: the same state for every run, unlike a long-lived
      // root filesystem. No lazy init, so no kernel thread zeroes inode tables during trials.
      execFileSync('truncate', ['-s', ext4Size, img]);
      execFileSync('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', img]);
      execFileSync('mount', ['-o', 'loop', img, mnt], { stdio: 'pipe' });
    } else if (kind === 'xfsimg') {
      // XFS with reflink (the store's shared extents), in a file on the disk as for ext4.
      execFileSync('truncate', ['-s', ext4Size, img]);
      execFileSync('mkfs.xfs', ['-q', '-f', '-m', 'reflink=1', img]);
      execFileSync('mount', ['-o', 'loop', img, mnt], { stdio: 'pipe' });
    } else {
      throw new Error(`unknown scratch filesystem ${kind}`);
    }
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot mount a ${kind} (root needed): ${firstLine(e.stderr || e)}`);
  }
  const teardown = addCleanup(() => {
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', mnt]); // still busy: detach now, freed when released
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { kind, dir, mnt, teardown };
}

export async function fsFacts(dir) {
  const type = await tryRun('stat', ['-f', '-c', '%T', dir]);
  const mount = await tryRun('findmnt', ['-n', '-o', 'SOURCE,FSTYPE,OPTIONS', '-T', dir]);
  return { type, mount };
}

/**
 * How busy the machine is right now: the 1-minute load average and, where the kernel has PSI,
 * the share of the last 10 s in which some runnable task waited for a CPU. Recorded with every
 * run: other work on the machine makes every figure slower and noisier.
 */
export function machineLoad() {
  const res = { load1: +os.loadavg()[0].toFixed(2) };
  try {
    const m = fs.readFileSync('/proc/pressure/cpu', 'utf8').match(/^some avg10=([\d.]+)/m);
    if (m) res.cpuPressure10 = Number(m[1]);
  } catch {}
  return res;
}
