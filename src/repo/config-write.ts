import { readFileSync, statSync } from 'node:fs';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { fromSystem } from '../errors.js';
import { LockFile } from '../lock.js';
import type { Repo } from './repo.js';

/** A value as git's config writer quotes it. */
function quoteValue(value: string): string {
  const escaped = value
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t');
  return /^\s|\s$|[#;]/.test(value) ? `"${escaped}"` : escaped;
}

function headerMatches(inner: string, section: string, subsection: string): boolean {
  const m = /^\s*([A-Za-z0-9.-]+)\s+"((?:[^"\\]|\\.)*)"\s*$/.exec(inner);
  return (
    m !== null &&
    m[1]!.toLowerCase() === section.toLowerCase() &&
    m[2]!.replace(/\\(.)/g, '$1') === subsection
  );
}

/**
 * Sets `[section "subsection"] key = value` entries in the repository's config file the way
 * `git config` does: through config.lock (keeping the file's mode), an existing line of the key
 * replaced in place, a missing key added after the section's last line, a missing section
 * appended at the end; everything else (comments, layout) kept byte for byte. The lock is taken
 * now and the file replaced by `commit()`.
 */
export class ConfigEdit {
  private readonly lock: LockFile;

  constructor(repo: Repo, section: string, subsection: string, entries: [string, string][]) {
    const path = join(repo.commonDir, 'config');
    this.lock = new LockFile(path, 'ERR_CONFIG_LOCKED');
    try {
      let text = '';
      let mode = 0o644;
      try {
        text = readFileSync(path, 'utf8');
        mode = statSync(path).mode & 0o7777;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw fromSystem(err, 'read', path);
      }
      chmodSync(this.lock.lockPath, mode);
      this.lock.write(edit(text, section, subsection, entries));
    } catch (err) {
      this.lock.rollback();
      throw err;
    }
  }

  commit(): void {
    this.lock.commit();
  }

  rollback(): void {
    this.lock.rollback();
  }
}

function edit(
  text: string,
  section: string,
  subsection: string,
  entries: [string, string][],
): string {
  const lines = text === '' ? [] : text.split(/(?<=\n)/);
  if (lines.length > 0 && !lines[lines.length - 1]!.endsWith('\n')) lines[lines.length - 1] += '\n';
  const pending = new Map(entries.map(([k, v]) => [k.toLowerCase(), v]));
  let inSection = false;
  let lastLine = -1; // the last line of the (last) matching section
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const header = /^\s*\[([^\]]*)\]/.exec(line);
    if (header) {
      inSection = headerMatches(header[1]!, section, subsection);
      if (inSection) lastLine = i;
      continue;
    }
    if (!inSection) continue;
    if (!/^\s*([#;].*)?$/.test(line)) lastLine = i;
    const key = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)/.exec(line)?.[1]?.toLowerCase();
    if (key !== undefined && pending.has(key)) {
      const name = entries.find(([k]) => k.toLowerCase() === key)![0];
      lines[i] = `\t${name} = ${quoteValue(pending.get(key)!)}\n`;
      pending.delete(key);
    }
  }
  const added = entries
    .filter(([k]) => pending.has(k.toLowerCase()))
    .map(([k, v]) => `\t${k} = ${quoteValue(v)}\n`);
  if (added.length === 0) return lines.join('');
  if (lastLine >= 0) {
    lines.splice(lastLine + 1, 0, ...added);
    return lines.join('');
  }
  const sub = subsection.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `${lines.join('')}[${section} "${sub}"]\n${added.join('')}`;
}
