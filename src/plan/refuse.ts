import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { NativeOdb } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import { readObject } from '../repo/objects.js';
import type { EntryList } from './entries.js';
import type { Repo } from '../repo/repo.js';

/**
 * Content conversions on checkout (eol, ident, working-tree-encoding) are not
 * implemented yet. Rather than write bytes that differ from git's, refuse a checkout that could
 * need one: config that turns conversion on, or any attribute file that asks for one.
 * Conservative on purpose — an attribute on a pattern that matches nothing still refuses.
 */
export function assertNoConversions(repo: Repo, odb: NativeOdb, entries: EntryList): void {
  const { config } = repo;
  const autocrlf = config.get('core.autocrlf');
  if (
    autocrlf !== undefined &&
    autocrlf.toLowerCase() !== 'input' &&
    config.getBool('core.autocrlf') === true
  ) {
    throw unsupported('core.autocrlf=true converts line endings on checkout');
  }
  const eolCrlf = (config.get('core.eol') ?? '').toLowerCase() === 'crlf';
  const sources: { where: string; text: string }[] = [];
  for (const i of entriesNamed(entries, '.gitattributes')) {
    const blob = readObject(odb, entries.oidHex(i));
    sources.push({ where: entries.display(i), text: blob.data.toString('utf8') });
  }
  const home = process.env['HOME'] ?? homedir();
  const xdg = process.env['XDG_CONFIG_HOME'] || join(home, '.config');
  const files = [
    join(repo.commonDir, 'info', 'attributes'),
    config.get('core.attributesfile') ?? join(xdg, 'git', 'attributes'),
  ];
  for (const file of files) {
    try {
      sources.push({
        where: file,
        text: readFileSync(file.startsWith('~/') ? join(home, file.slice(2)) : file, 'utf8'),
      });
    } catch {
      /* absent */
    }
  }
  for (const { where, text } of sources) {
    text.split('\n').forEach((raw, n) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      for (const token of line.split(/\s+/).slice(1)) {
        // Filters are done (write/filters.ts); the other conversions not yet.
        const why = conversion(token, eolCrlf);
        if (why) throw unsupported(`${where}:${n + 1} sets '${token}' (${why})`);
      }
    });
  }
}

function conversion(token: string, eolCrlf: boolean): string | undefined {
  const [name, value] = token.includes('=')
    ? [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)]
    : [token, undefined];
  if (name === 'eol' && value === 'crlf') return 'CRLF line endings';
  if (name === 'ident' && value === undefined) return '$Id$ expansion';
  if (name === 'working-tree-encoding' && value !== undefined) return 're-encoding';
  if (
    eolCrlf &&
    (name === 'text' || name === 'crlf') &&
    (value === undefined || value === 'auto')
  ) {
    return 'text with core.eol=crlf';
  }
  return undefined;
}

function unsupported(why: string): PcheckoutError {
  return new PcheckoutError(
    'ERR_UNSUPPORTED',
    `this checkout needs content conversion, which pcheckout does not do yet: ${why}. Use git checkout for this repository.`,
  );
}

/** Positions of the entries whose last component is `base`, found without a string per entry. */
function entriesNamed(entries: EntryList, base: string): number[] {
  const needle = Buffer.from(`/${base}\0`, 'latin1');
  const out: number[] = [];
  const { paths, starts } = entries;
  // A top-level match has no slash before it.
  const top = Buffer.from(`${base}\0`, 'latin1');
  for (let at = paths.indexOf(needle); at >= 0; at = paths.indexOf(needle, at + 1)) {
    out.push(entryAt(starts, at + 1));
  }
  for (let at = paths.indexOf(top); at >= 0; at = paths.indexOf(top, at + 1)) {
    const i = entryAt(starts, at);
    if (starts[i] === at && !out.includes(i)) out.push(i);
  }
  return out.sort((x, y) => x - y);
}

/** The entry whose path contains byte offset `pos`. */
function entryAt(starts: Uint32Array, pos: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
