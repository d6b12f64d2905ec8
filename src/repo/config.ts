import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { PcheckoutError } from '../errors.js';

/**
 * git's config files, read in git's order (system, global, local, worktree, environment) so the
 * last value wins as it does for git. Keys are `section.key` or `section.subsection.key`, with
 * section and key lowercased (subsections keep their case).
 */
export class GitConfig {
  private readonly values = new Map<string, string[]>();

  static load(commonDir: string, gitDir: string, env: NodeJS.ProcessEnv = process.env): GitConfig {
    const config = new GitConfig();
    if (!truthy(env['GIT_CONFIG_NOSYSTEM'])) {
      config.readFile(env['GIT_CONFIG_SYSTEM'] ?? '/etc/gitconfig', 0);
    }
    const globalOverride = env['GIT_CONFIG_GLOBAL'];
    if (globalOverride !== undefined) {
      if (globalOverride !== '') config.readFile(globalOverride, 0);
    } else {
      const home = env['HOME'] ?? homedir();
      const xdg = env['XDG_CONFIG_HOME'] || join(home, '.config');
      config.readFile(join(xdg, 'git', 'config'), 0);
      config.readFile(join(home, '.gitconfig'), 0);
    }
    config.readFile(join(commonDir, 'config'), 0);
    if (config.getBool('extensions.worktreeconfig') === true) {
      config.readFile(join(gitDir, 'config.worktree'), 0);
    }
    const count = Number(env['GIT_CONFIG_COUNT'] ?? 0);
    for (let i = 0; Number.isInteger(count) && i < count; i++) {
      const key = env[`GIT_CONFIG_KEY_${i}`];
      if (key) config.set(normalizeKey(key), env[`GIT_CONFIG_VALUE_${i}`] ?? '');
    }
    return config;
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

  private readFile(file: string, depth: number): void {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return; // a missing config file is normal
    }
    this.parseInto(text, file, depth);
  }

  private parseInto(text: string, file: string, depth: number): void {
    let section = '';
    let i = 0;
    const n = text.length;
    const fail = (why: string): never => {
      const line = text.slice(0, i).split('\n').length;
      throw new PcheckoutError('ERR_BAD_CONFIG', `bad config line ${line} in ${file}: ${why}`);
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
        if (text[i] === '=') {
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
        const key = `${section}.${name}`;
        this.set(key, value);
        if (key === 'include.path' && depth < 10) {
          const expanded = value.startsWith('~/') ? join(homedir(), value.slice(2)) : value;
          const target = isAbsolute(expanded) ? expanded : resolve(dirname(file), expanded);
          this.readFile(target, depth + 1);
        }
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
