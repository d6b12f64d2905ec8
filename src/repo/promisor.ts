/**
 * A partial clone's promisor remotes, and the fetch of the blobs it was promised, run as git's
 * own promisor code runs it (promisor-remote.c): the system `git`, found on PATH, with the
 * repository's config, protocol and credentials, so nothing of the transport is ours.
 */
import { spawn, spawnSync } from 'node:child_process';
import { forChild } from './byte-path.js';
import { PcheckoutError } from '../errors.js';
import type { Repo } from './repo.js';

/**
 * The remotes that promise missing objects, in the order git asks them: extensions.partialClone
 * first, then every remote.<name>.promisor=true in config order. Empty for a complete clone.
 */
export function promisorRemotes(repo: Repo): string[] {
  const out: string[] = [];
  const partial = repo.config.get('extensions.partialclone');
  if (partial !== undefined && partial !== '') out.push(partial);
  for (const key of repo.config.keys()) {
    if (!/^remote\..*\.promisor$/.test(key) || repo.config.getBool(key) !== true) continue;
    const name = key.slice('remote.'.length, -'.promisor'.length);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Whether GIT_NO_LAZY_FETCH turns lazy fetching off (git then refuses to fetch, as here). */
export function lazyFetchDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env['GIT_NO_LAZY_FETCH']?.toLowerCase();
  return v !== undefined && v !== '' && !['0', 'false', 'no', 'off'].includes(v);
}

/** The arguments of git's promisor fetch (promisor-remote.c's fetch_objects). */
export function fetchArgs(remote: string): string[] {
  return [
    '-c',
    'fetch.negotiationAlgorithm=noop',
    'fetch',
    remote,
    '--no-tags',
    '--no-write-fetch-head',
    '--recurse-submodules=no',
    '--filter=blob:none',
    '--stdin',
  ];
}

/** Where the fetch runs: the repository's git directory, named to git as GIT_DIR. */
function fetchEnv(repo: Repo): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = repo.worktree || repo.gitDir;
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_DIR: forChild(repo.gitDir, cwd) };
  // A fetch has no worktree or index; a caller's may name another repository's.
  delete env['GIT_WORK_TREE'];
  delete env['GIT_INDEX_FILE'];
  delete env['GIT_PREFIX'];
  return { cwd, env };
}

const STDERR_KEEP = 16 * 1024;

function failure(remote: string, count: number, why: string, cause?: unknown): PcheckoutError {
  const what = `${count} missing blob${count === 1 ? '' : 's'}`;
  return new PcheckoutError(
    'ERR_FETCH',
    `cannot fetch the ${what} from promisor remote '${remote}': ${why.trim() || 'git fetch failed'}`,
    { cause },
  );
}

function exitText(code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const how = signal ? `killed by ${signal}` : `exit status ${code}`;
  return stderr.trim() === '' ? `git fetch failed (${how})` : `${stderr.trim()} (${how})`;
}

export interface FetchOptions {
  /** Checked while the fetch runs: true stops it (the child is killed) with ERR_ABORTED. */
  aborted?: () => boolean;
  abortError?: () => unknown;
}

/**
 * Fetches `oids` (hex) in one `git fetch` from the first promisor remote; as git does, the
 * next remote is asked (for what is still missing) only when one fails or leaves some out.
 * `stillMissing` tells which of the ids the object store still lacks.
 * Resolves with the remote that answered; rejects with ERR_FETCH and git's stderr.
 */
export async function fetchBlobs(
  repo: Repo,
  remotes: readonly string[],
  oids: readonly string[],
  stillMissing: (oids: readonly string[]) => string[],
  options: FetchOptions = {},
): Promise<string> {
  let want = [...oids];
  let firstError: PcheckoutError | null = null;
  for (const remote of remotes) {
    try {
      await fetchFrom(repo, remote, want, options);
    } catch (err) {
      if (!(err instanceof PcheckoutError) || err.code !== 'ERR_FETCH') throw err;
      firstError ??= err;
      continue;
    }
    want = stillMissing(want);
    if (want.length === 0) return remote;
  }
  throw firstError ?? failure(remotes[0] ?? '?', want.length, 'the remote did not send them');
}

function fetchFrom(
  repo: Repo,
  remote: string,
  oids: readonly string[],
  options: FetchOptions,
): Promise<void> {
  const { cwd, env } = fetchEnv(repo);
  return new Promise((resolve, reject) => {
    const child = spawn('git', fetchArgs(remote), { cwd, env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    let abortedBy: unknown = null;
    const timer = options.aborted
      ? setInterval(() => {
          if (abortedBy === null && options.aborted!()) {
            abortedBy = options.abortError?.() ?? new Error('aborted');
            child.kill('SIGTERM');
          }
        }, 50)
      : null;
    const done = (err: unknown): void => {
      if (timer) clearInterval(timer);
      if (err === null) resolve();
      else reject(err);
    };
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      if (stderr.length < STDERR_KEEP) stderr += s.slice(0, STDERR_KEEP - stderr.length);
    });
    child.stdin.on('error', () => {
      /* git exited before reading every id: its exit status says why */
    });
    child.on('error', (err) =>
      done(failure(remote, oids.length, `cannot run git: ${err.message}`, err)),
    );
    child.on('close', (code, signal) => {
      if (abortedBy !== null) done(abortedBy);
      else if (code === 0) done(null);
      else done(failure(remote, oids.length, exitText(code, signal, stderr)));
    });
    child.stdin.end(oids.map((oid) => `${oid}\n`).join(''));
  });
}

/**
 * The same fetch, synchronously, for the one object a step that cannot wait needs now (git
 * fetches such an object on demand too). Returns whether a remote answered.
 */
export function fetchBlobsSync(
  repo: Repo,
  remotes: readonly string[],
  oids: readonly string[],
): boolean {
  const { cwd, env } = fetchEnv(repo);
  for (const remote of remotes) {
    const res = spawnSync('git', fetchArgs(remote), {
      cwd,
      env,
      input: oids.map((oid) => `${oid}\n`).join(''),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    if (res.status === 0) return true;
  }
  return false;
}
