/**
 * What git's config includes look at: include paths expanded (interpolate_path) and the
 * includeIf conditions (gitdir:, gitdir/i:, onbranch:, hasconfig:remote.*.url:), for
 * config.ts's reader.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { PcheckoutError } from '../errors.js';
import { compileGlob, wildmatch } from '../plan/wildmatch.js';

/** What include conditions look at, and where the files are. */
export interface LoadContext {
  env: NodeJS.ProcessEnv;
  /** The per-worktree git directory (includeIf.gitdir), or null. */
  gitDir: string | null;
  /** HEAD's branch (includeIf.onbranch), read on first use. */
  branch: () => string | null;
  /** Every remote.*.url (includeIf.hasconfig), gathered on first use; null while gathering. */
  remoteUrls: () => string[] | null;
}

/** HEAD's branch (short name), or null when HEAD is detached or unreadable. */
export function headBranch(gitDir: string): string | null {
  try {
    const m = /^ref: refs\/heads\/(.+?)\s*$/.exec(readFileSync(join(gitDir, 'HEAD'), 'utf8'));
    return m ? m[1]! : null;
  } catch {
    return null;
  }
}

/** A home directory from /etc/passwd (git's getpwnam for `~user/`). */
function passwdHome(user: string): string | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === user && f.length >= 6) return f[5];
    }
  } catch {
    /* no passwd file */
  }
  return undefined;
}

/**
 * git's interpolate_path(): `~/` is $HOME (its real path with `realHome`), `~user/` that
 * user's home, `%(prefix)/` git's prefix (/usr for Debian's git). null when it cannot expand.
 */
export function interpolatePath(
  path: string,
  env: NodeJS.ProcessEnv,
  realHome: boolean,
): string | null {
  if (path.startsWith('%(prefix)/')) return join('/usr', path.slice(10));
  if (!path.startsWith('~')) return path;
  const slash = path.indexOf('/');
  const user = path.slice(1, slash < 0 ? path.length : slash);
  const rest = slash < 0 ? '' : path.slice(slash);
  let home: string | undefined;
  if (user === '') {
    home = env['HOME'];
    if (home !== undefined && realHome) {
      try {
        home = realpathSync(home);
      } catch {
        /* as given */
      }
    }
  } else {
    home = passwdHome(user);
  }
  return home === undefined ? null : home + rest;
}

export function expandUser(path: string, env: NodeJS.ProcessEnv, where: string): string {
  const out = interpolatePath(path, env, false);
  if (out === null) {
    throw new PcheckoutError(
      'ERR_BAD_CONFIG',
      `could not expand include path '${path}' (${where})`,
    );
  }
  return out;
}

/** git's include_condition_is_true() for includeIf.<cond>.path read from `file`. */
export function includeCondition(cond: string, file: string | null, ctx: LoadContext): boolean {
  if (cond.startsWith('gitdir:')) return includeByGitdir(cond.slice(7), false, file, ctx);
  if (cond.startsWith('gitdir/i:')) return includeByGitdir(cond.slice(9), true, file, ctx);
  if (cond.startsWith('onbranch:')) {
    const branch = ctx.branch();
    if (branch === null) return false;
    return globMatch(withTrailingStarStar(cond.slice(9)), branch, false);
  }
  if (cond.startsWith('hasconfig:remote.*.url:')) {
    const urls = ctx.remoteUrls();
    if (urls === null) return true; // gathering the URLs: git follows these unconditionally
    const pattern = cond.slice(23);
    return urls.some((url) => globMatch(pattern, url, false));
  }
  return false; // unknown conditions are false
}

function withTrailingStarStar(pattern: string): string {
  return pattern.endsWith('/') ? `${pattern}**` : pattern;
}

/** wildmatch with WM_PATHNAME (and, `icase`, ASCII case folded). */
function globMatch(pattern: string, text: string, icase: boolean): boolean {
  const fold = (s: string): string => (icase ? s.replace(/[A-Z]/g, (c) => c.toLowerCase()) : s);
  return wildmatch(compileGlob(fold(pattern), true), fold(text), true);
}

/** git's include_by_gitdir(): the pattern against the git directory, real path then as given. */
function includeByGitdir(
  condition: string,
  icase: boolean,
  file: string | null,
  ctx: LoadContext,
): boolean {
  if (ctx.gitDir === null) return false;
  let pattern = interpolatePath(condition, ctx.env, true) ?? condition;
  let prefix = 0;
  if (pattern.startsWith('./')) {
    // git complains ("relative config include conditionals must come from files") and
    // takes the condition as false.
    if (file === null) return false;
    let real = file;
    try {
      real = realpathSync(file);
    } catch {
      /* as given */
    }
    const dir = dirname(real);
    pattern = dir + pattern.slice(1);
    prefix = dir.length + 1;
  } else if (!isAbsolute(pattern)) {
    pattern = `**/${pattern}`;
  }
  pattern = withTrailingStarStar(pattern);
  let real = ctx.gitDir;
  try {
    real = realpathSync(ctx.gitDir);
  } catch {
    /* as given */
  }
  for (const text of [real, resolve(ctx.gitDir)]) {
    if (prefix > 0) {
      // The literal part from the including file's directory is compared as it is.
      if (text.length < prefix) continue;
      const a = pattern.slice(0, prefix);
      const b = text.slice(0, prefix);
      if (icase ? a.toLowerCase() !== b.toLowerCase() : a !== b) continue;
    }
    if (globMatch(pattern.slice(prefix), text.slice(prefix), icase)) return true;
  }
  return false;
}
