import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { makeDirectories } from '../mkdirs.js';
import { adjustSharedPerm } from '../perms.js';
import type { Repo } from './repo.js';

export interface ReflogEntry {
  old: string;
  new: string;
  message: string;
}

const PER_WORKTREE = /^(HEAD|refs\/bisect\/|refs\/worktree\/|refs\/rewritten\/)/;

export function reflogPath(repo: Repo, ref: string): string {
  return join(PER_WORKTREE.test(ref) ? repo.gitDir : repo.commonDir, 'logs', ref);
}

/** The entries of a ref's reflog, oldest first (empty when it has none). */
export function readReflog(repo: Repo, ref: string): ReflogEntry[] {
  let text: string;
  try {
    text = readFileSync(reflogPath(repo, ref), 'utf8');
  } catch {
    return [];
  }
  const out: ReflogEntry[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) [^\t]*(?:\t(.*))?$/.exec(line);
    if (m) out.push({ old: m[1]!, new: m[2]!, message: m[3] ?? '' });
  }
  return out;
}

/** Whether git would create a reflog for `ref` (core.logAllRefUpdates; on by default unless bare). */
function shouldCreate(repo: Repo, ref: string): boolean {
  const setting = repo.config.get('core.logallrefupdates');
  if (setting?.trim().toLowerCase() === 'always') return true;
  const on =
    setting === undefined
      ? repo.config.getBool('core.bare') !== true
      : repo.config.getBool('core.logallrefupdates') === true;
  return on && /^(HEAD$|refs\/heads\/|refs\/remotes\/|refs\/notes\/)/.test(ref);
}

/** "Name <email> seconds +zone", as git signs a reflog line. */
function committerIdent(repo: Repo): string {
  const name = process.env['GIT_COMMITTER_NAME'] ?? repo.config.get('user.name') ?? safeUser();
  const email =
    process.env['GIT_COMMITTER_EMAIL'] ??
    repo.config.get('user.email') ??
    `${safeUser()}@${hostname()}`;
  const now = Math.floor(Date.now() / 1000);
  const offset = -new Date().getTimezoneOffset();
  const abs = Math.abs(offset);
  const tz = `${offset >= 0 ? '+' : '-'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${name} <${email}> ${now} ${tz}`;
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Appends a line to a ref's reflog, as git does when the ref moves (modes per sharedRepository). */
export function appendReflog(
  repo: Repo,
  ref: string,
  oldOid: string,
  newOid: string,
  message: string,
): void {
  const logPath = reflogPath(repo, ref);
  if (!existsSync(logPath) && !shouldCreate(repo, ref)) return;
  try {
    makeDirs(repo, dirname(logPath));
    appendFileSync(
      logPath,
      `${oldOid} ${newOid} ${committerIdent(repo)}\t${message.replace(/\n/g, ' ')}\n`,
    );
    adjustSharedPerm(logPath, repo.shared);
  } catch {
    // The reflog is a convenience; a failure to append must not fail a finished checkout.
  }
}

/** mkdir -p inside the git directory, each new directory adjusted for sharedRepository. */
export function makeDirs(repo: Repo, dir: string): void {
  if (existsSync(dir)) return;
  const made = makeDirectories(dir);
  if (made === undefined || repo.shared === 0) return;
  let d = dir;
  const stop = relative(made, dir);
  adjustSharedPerm(d, repo.shared);
  for (let i = 0; stop !== '' && i < stop.split(sep).length; i++) {
    d = dirname(d);
    adjustSharedPerm(d, repo.shared);
  }
}
