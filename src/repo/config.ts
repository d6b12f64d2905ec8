import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { PcheckoutError } from '../errors.js';
import { expandUser, headBranch, includeCondition, type LoadContext } from './config-include.js';

/** git's MAX_INCLUDE_DEPTH. */
const MAX_INCLUDE_DEPTH = 10;

/**
 * git's config, read in git's order (system, global — XDG then ~/.gitconfig —, local,
 * worktree, then the command line: GIT_CONFIG_COUNT and GIT_CONFIG_PARAMETERS) so the last
 * value wins as it does for git, with include.path and includeIf (gitdir:, gitdir/i:,
 * onbranch:, hasconfig:remote.*.url:) followed where they appear. Keys are `section.key` or
 * `section.subsection.key`, section and key lowercased (subsections keep their case).
 * A file git cannot read is an error (ERR_BAD_CONFIG), as for git, except a global one that
 * is only unreadable (EACCES), which git skips.
 */
export class GitConfig {
  private readonly values = new Map<string, string[]>();

  static load(commonDir: string, gitDir: string, env: NodeJS.ProcessEnv = process.env): GitConfig {
    let branch: string | null | undefined;
    let urls: string[] | null | undefined;
    const ctx: LoadContext = {
      env,
      gitDir,
      branch: () => (branch === undefined ? (branch = headBranch(gitDir)) : branch),
      remoteUrls: () => {
        if (urls === undefined) {
          urls = null; // while gathering, hasconfig includes are followed unconditionally
          const all = new GitConfig();
          all.readSequence(commonDir, gitDir, ctx);
          urls = [...all.values].filter(([k]) => /^remote\..*\.url$/.test(k)).flatMap(([, v]) => v);
        }
        return urls;
      },
    };
    const config = new GitConfig();
    config.readSequence(commonDir, gitDir, ctx);
    return config;
  }

  /**
   * git's protected config: system, global and the command line, never the repository's own
   * files (what safe.directory is read from, before any repository file is trusted). An
   * includeIf on the git directory or the branch is false there, as for git.
   */
  static loadProtected(env: NodeJS.ProcessEnv = process.env): GitConfig {
    const ctx: LoadContext = { env, gitDir: null, branch: () => null, remoteUrls: () => [] };
    const config = new GitConfig();
    config.readUserFiles(ctx);
    config.readCommandLine(ctx);
    return config;
  }

  private readSequence(commonDir: string, gitDir: string, ctx: LoadContext): void {
    this.readUserFiles(ctx);
    this.readTop(join(commonDir, 'config'), false, ctx);
    if (this.getBool('extensions.worktreeconfig') === true) {
      this.readTop(join(gitDir, 'config.worktree'), false, ctx);
    }
    this.readCommandLine(ctx);
  }

  /** The system file, then the global ones (XDG, then ~/.gitconfig). */
  private readUserFiles(ctx: LoadContext): void {
    const { env } = ctx;
    if (!truthy(env['GIT_CONFIG_NOSYSTEM'])) {
      this.readTop(env['GIT_CONFIG_SYSTEM'] ?? '/etc/gitconfig', false, ctx);
    }
    const globalOverride = env['GIT_CONFIG_GLOBAL'];
    if (globalOverride !== undefined) {
      if (globalOverride !== '') this.readTop(globalOverride, true, ctx);
    } else {
      const home = env['HOME'];
      const xdg = env['XDG_CONFIG_HOME'];
      const xdgFile = xdg
        ? join(xdg, 'git', 'config')
        : home
          ? join(home, '.config', 'git', 'config')
          : undefined;
      if (xdgFile) this.readTop(xdgFile, true, ctx);
      if (home) this.readTop(join(home, '.gitconfig'), true, ctx);
    }
  }

  /**
   * A top-level config file: absent is fine; unreadable is an error, except (`eaccesOk`) a
   * global file git skips when it may not read it.
   */
  private readTop(file: string, eaccesOk: boolean, ctx: LoadContext): void {
    const text = readConfigFile(file, eaccesOk);
    if (text !== null) this.parseInto(text, file, 0, ctx);
  }

  /** GIT_CONFIG_COUNT/KEY_n/VALUE_n, then GIT_CONFIG_PARAMETERS (what `git -c` sets). */
  private readCommandLine(ctx: LoadContext): void {
    const { env } = ctx;
    const bad = (why: string): never => {
      throw new PcheckoutError('ERR_BAD_CONFIG', `unable to parse command-line config: ${why}`);
    };
    const countText = env['GIT_CONFIG_COUNT'];
    if (countText !== undefined && countText !== '') {
      const count = /^\d+$/.test(countText) ? Number(countText) : NaN;
      if (!Number.isSafeInteger(count)) bad('bogus count in GIT_CONFIG_COUNT');
      for (let i = 0; i < count; i++) {
        const key = env[`GIT_CONFIG_KEY_${i}`];
        const value = env[`GIT_CONFIG_VALUE_${i}`];
        if (key === undefined) bad(`missing config key GIT_CONFIG_KEY_${i}`);
        if (value === undefined) bad(`missing config value GIT_CONFIG_VALUE_${i}`);
        this.commandPair(key!, value!, ctx);
      }
    }
    const params = env['GIT_CONFIG_PARAMETERS'];
    if (params) {
      for (const { key, value } of parseConfigParameters(params)) this.commandPair(key, value, ctx);
    }
  }

  private commandPair(rawKey: string, value: string | null, ctx: LoadContext): void {
    const key = canonicalKey(rawKey);
    if (key === undefined) {
      throw new PcheckoutError(
        'ERR_BAD_CONFIG',
        `unable to parse command-line config: invalid key: ${rawKey}`,
      );
    }
    this.setAndInclude(key, value ?? 'true', value === null, null, 0, ctx);
  }

  keys(): IterableIterator<string> {
    return this.values.keys();
  }

  get(key: string): string | undefined {
    const all = this.values.get(normalizeKey(key));
    return all?.[all.length - 1];
  }

  /** Every value of a multi-valued key, in file order. */
  getAll(key: string): string[] {
    return [...(this.values.get(normalizeKey(key)) ?? [])];
  }

  getBool(key: string): boolean | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    const parsed = parseBool(v);
    if (parsed === undefined) {
      throw new PcheckoutError('ERR_BAD_CONFIG', `bad boolean config value '${v}' for '${key}'`);
    }
    return parsed;
  }

  getInt(key: string): number | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    const m = /^\s*([-+]?\d+)\s*([kmg]?)\s*$/i.exec(v);
    if (!m) {
      throw new PcheckoutError('ERR_BAD_CONFIG', `bad numeric config value '${v}' for '${key}'`);
    }
    const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase()] ?? 1;
    return Number(m[1]) * scale;
  }

  private set(key: string, value: string): void {
    const list = this.values.get(key);
    if (list) list.push(value);
    else this.values.set(key, [value]);
  }

  /**
   * Sets a value, then follows it if it is an include (include.path, or includeIf.<cond>.path
   * with a true condition). `file`: where it was read (null: the command line).
   */
  private setAndInclude(
    key: string,
    value: string,
    implicit: boolean,
    file: string | null,
    depth: number,
    ctx: LoadContext,
  ): void {
    this.set(key, value);
    let include = key === 'include.path';
    if (!include && key.startsWith('includeif.') && key.endsWith('.path')) {
      include = includeCondition(key.slice(10, -5), file, ctx);
    }
    if (!include) return;
    const where = file ?? 'the command line';
    if (implicit) {
      throw new PcheckoutError('ERR_BAD_CONFIG', `missing value for '${key}' in ${where}`);
    }
    const expanded = expandUser(value, ctx.env, where);
    let target = expanded;
    if (!isAbsolute(expanded)) {
      if (file === null) {
        throw new PcheckoutError(
          'ERR_BAD_CONFIG',
          'unable to parse command-line config: relative config includes must come from files',
        );
      }
      target = join(dirname(file), expanded);
    }
    const text = readConfigFile(target, false);
    if (text === null) return; // a missing include is fine
    if (depth + 1 > MAX_INCLUDE_DEPTH) {
      throw new PcheckoutError(
        'ERR_BAD_CONFIG',
        `exceeded maximum include depth (${MAX_INCLUDE_DEPTH}) while including ${target} from ${where}; this might be due to circular includes`,
        { path: target },
      );
    }
    this.parseInto(text, target, depth + 1, ctx);
  }

  private parseInto(text: string, file: string, depth: number, ctx: LoadContext): void {
    let section = '';
    let i = text.startsWith('\ufeff') ? 1 : 0; // a UTF-8 byte order mark
    const n = text.length;
    const fail = (why: string): never => {
      const line = text.slice(0, i).split('\n').length;
      throw new PcheckoutError(
        'ERR_BAD_CONFIG',
        `bad config line ${line} in file ${file}: ${why}`,
        {
          path: file,
        },
      );
    };
    while (i < n) {
      const c = text[i]!;
      if (c === '\n' || c === ' ' || c === '\t' || c === '\r') {
        i++;
      } else if (c === '#' || c === ';') {
        while (i < n && text[i] !== '\n') i++;
      } else if (c === '[') {
        const end = text.indexOf(']', i);
        if (end < 0) fail('unterminated section header');
        section = parseSectionHeader(text.slice(i + 1, end)) ?? fail('bad section header');
        i = end + 1;
      } else {
        const m = /^[A-Za-z][A-Za-z0-9-]*/.exec(text.slice(i, i + 256));
        if (!m || section === '') fail('expected a variable name');
        const name = m![0].toLowerCase();
        i += m![0].length;
        while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
        let value = 'true'; // "key" alone means true
        let implicit = true;
        if (text[i] === '=') {
          implicit = false;
          const parsed = parseValue(text, i + 1);
          if (parsed === undefined) fail('unterminated quoted value');
          value = parsed!.value;
          i = parsed!.end;
        } else if (
          i < n &&
          text[i] !== '\n' &&
          text[i] !== '#' &&
          text[i] !== ';' &&
          text[i] !== '\r'
        ) {
          fail('expected "="');
        }
        this.setAndInclude(`${section}.${name}`, value, implicit, file, depth, ctx);
      }
    }
  }
}

function parseSectionHeader(inner: string): string | undefined {
  const quoted = /^\s*([A-Za-z0-9.-]+)\s+"((?:[^"\\]|\\.)*)"\s*$/.exec(inner);
  if (quoted) return `${quoted[1]!.toLowerCase()}.${quoted[2]!.replace(/\\(.)/g, '$1')}`;
  const plain = /^\s*([A-Za-z0-9.-]+)\s*$/.exec(inner);
  if (!plain) return undefined;
  // [section.sub] (deprecated form): both parts are case-insensitive.
  return plain[1]!.toLowerCase();
}

function parseValue(text: string, start: number): { value: string; end: number } | undefined {
  let i = start;
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  // Skip leading white space.
  while (text[i] === ' ' || text[i] === '\t') i++;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n' || c === '\r') {
      if (quoted) return undefined;
      break;
    }
    if (!quoted && (c === '#' || c === ';')) {
      while (i < text.length && text[i] !== '\n') i++;
      break;
    }
    if (!quoted && (c === ' ' || c === '\t')) {
      pendingSpace += c;
      continue;
    }
    out += pendingSpace;
    pendingSpace = '';
    if (c === '"') {
      quoted = !quoted;
    } else if (c === '\\') {
      const next = text[++i];
      if (next === '\n') continue; // line continuation
      if (next === '\r' && text[i + 1] === '\n') {
        i++;
        continue;
      }
      const escapes: Record<string, string> = { n: '\n', t: '\t', b: '\b', '\\': '\\', '"': '"' };
      if (next === undefined || !(next in escapes)) return undefined;
      out += escapes[next];
    } else {
      out += c;
    }
  }
  if (quoted) return undefined;
  return { value: out, end: i };
}

function normalizeKey(key: string): string {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first < 0) return key.toLowerCase();
  const section = key.slice(0, first).toLowerCase();
  const name = key.slice(last + 1).toLowerCase();
  return first === last ? `${section}.${name}` : `${section}.${key.slice(first + 1, last)}.${name}`;
}

export function parseBool(v: string): boolean | undefined {
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === 'yes' || s === 'on' || s === '1') return true;
  if (s === 'false' || s === 'no' || s === 'off' || s === '0' || s === '') return false;
  if (/^-?\d+$/.test(s)) return Number(s) !== 0;
  return undefined;
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && parseBool(v) === true;
}

/**
 * A config file's text; null when it is absent (or, `eaccesOk`, only unreadable). A directory
 * reads as empty, as for git; anything else git cannot read is an error.
 */
function readConfigFile(file: string, eaccesOk: boolean): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'EACCES' && eaccesOk) return null;
    if (code === 'EISDIR') return '';
    throw new PcheckoutError(
      'ERR_BAD_CONFIG',
      `unable to access '${file}': ${(err as Error).message}`,
      { path: file, cause: err },
    );
  }
}

/**
 * git's canonical form of a command-line key (git_config_parse_key): section and variable
 * name lowercased and checked, a subsection kept as it is. undefined when invalid.
 */
export function canonicalKey(key: string): string | undefined {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first <= 0 || last === key.length - 1) return undefined;
  const section = key.slice(0, first);
  const name = key.slice(last + 1);
  if (!/^[A-Za-z0-9-]+$/.test(section) || !/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) return undefined;
  const sub = key.slice(first + 1, last);
  if (sub.includes('\n')) return undefined;
  return first === last
    ? `${section.toLowerCase()}.${name.toLowerCase()}`
    : `${section.toLowerCase()}.${sub}.${name.toLowerCase()}`;
}

/**
 * GIT_CONFIG_PARAMETERS as git writes it for `git -c` (shell single-quoted, space separated):
 * `'key'='value'` pairs, `'key'=` (no value: true), and the older `'key=value'` form.
 */
export function parseConfigParameters(env: string): { key: string; value: string | null }[] {
  const bogus = (): never => {
    throw new PcheckoutError(
      'ERR_BAD_CONFIG',
      'unable to parse command-line config: bogus format in GIT_CONFIG_PARAMETERS',
    );
  };
  const isSpace = (c: string | undefined): boolean =>
    c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f';
  let i = 0;
  /** One single-quoted word at i (git's sq_dequote_step); i ends after it. */
  const word = (): string => {
    if (env[i] !== "'") bogus();
    let out = '';
    i++;
    for (;;) {
      if (i >= env.length) bogus();
      const c = env[i]!;
      if (c !== "'") {
        out += c;
        i++;
        continue;
      }
      // Out of the quotes: a backslashed ' or ! and back in, or the end of the word.
      if (env[i + 1] === '\\' && (env[i + 2] === "'" || env[i + 2] === '!') && env[i + 3] === "'") {
        out += env[i + 2];
        i += 4;
        continue;
      }
      i++;
      return out;
    }
  };
  const out: { key: string; value: string | null }[] = [];
  while (i < env.length) {
    const key = word();
    if (i >= env.length || isSpace(env[i])) {
      // 'key=value' (or 'key' alone: true)
      const eq = key.indexOf('=');
      const name = (eq < 0 ? key : key.slice(0, eq)).trim();
      if (name === '') bogus();
      out.push({ key: name, value: eq < 0 ? null : key.slice(eq + 1) });
    } else if (env[i] === '=') {
      i++;
      if (env[i] === "'") {
        const value = word();
        if (i < env.length && !isSpace(env[i])) bogus();
        out.push({ key, value });
      } else if (i >= env.length || isSpace(env[i])) {
        out.push({ key, value: null });
      } else {
        bogus();
      }
    } else {
      bogus();
    }
    while (isSpace(env[i])) i++;
  }
  return out;
}
