/**
 * git's attributes (gitattributes(5)), resolved as git 2.39 resolves them, for the few names the
 * content conversions need (or every name, for tests against `git check-attr -a`).
 *
 * Sources, lowest precedence first: the built-in `[attr]binary -diff -merge -text`, the system
 * file (/etc/gitattributes, off with GIT_ATTR_NOSYSTEM), core.attributesFile (default
 * $XDG_CONFIG_HOME/git/attributes), the `.gitattributes` of the worktree top, those of each
 * directory down to the path's own, and $GIT_COMMON_DIR/info/attributes on top. Within a file
 * the last matching line wins; within a line the last setting wins; the first value found for
 * a name (from the top) decides it, and a macro set to true expands where it is set.
 *
 * In-tree `.gitattributes` come from a list of entries (blobs: a fresh checkout has no worktree
 * to read them from) and from the worktree, in git's order for the direction: a checkout reads
 * the list (the result index) first, falling back to the worktree; a check-in (the dirty check,
 * and checkout-index) reads the worktree first, falling back to the index.
 */
import { join, relative } from 'node:path';
import type { NativeOdb } from '../addon.js';
import { parseBool } from '../repo/config.js';
import type { Repo } from '../repo/repo.js';
import type { EntryList } from './entries.js';
import { dirsOf } from './rows.js';
import { compilePattern, matches, type Pattern } from './ignore.js';
import {
  ATTR_MAX_FILE_SIZE,
  Names,
  attributeFiles,
  blobLines,
  fileLines,
  parseLine,
  readAttrFile,
  type AttrValue,
  type ParsedLine,
} from './attributes-read.js';

export { ATTR_MAX_FILE_SIZE, ATTR_MAX_LINE_LENGTH, type AttrValue } from './attributes-read.js';

export const CONVERSION_ATTRIBUTES = [
  'text',
  'eol',
  'crlf',
  'ident',
  'filter',
  'working-tree-encoding',
] as const;

/** Where Debian's git (prefix /usr) reads the system attributes. */
export const SYSTEM_ATTRIBUTES = '/etc/gitattributes';

const BUILTIN = '[attr]binary -diff -merge -text';
const UNKNOWN = Symbol('unknown');
type Slot = AttrValue | typeof UNKNOWN;

export interface AttributeSources {
  repo: Repo;
  odb: NativeOdb;
  /** The entries whose `.gitattributes` blobs apply (the target tree, result index or index). */
  list: EntryList | null;
  /** The worktree whose `.gitattributes` files apply, or null (none yet, or not to be read). */
  worktree: string | null;
  /** git's direction: 'checkout' reads the list first, 'checkin' the worktree first. */
  direction: 'checkout' | 'checkin';
  /**
   * Directories whose .gitattributes this checkout writes from the list: read from the list
   * whatever the direction (git reads it once written, before the files after it).
   */
  rewritten?: ReadonlySet<string>;
  /**
   * Directories whose worktree .gitattributes this checkout deletes: not read, as git unlinks
   * what a checkout removes before it writes a file.
   */
  removed?: ReadonlySet<string>;
  /** git's warnings (unreadable or too large files, bad lines), as git words them. */
  warn: (message: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Called every few thousand paths of a resolve: throws to stop it (an aborted call). */
  check?: () => void;
  /**
   * Which of these worktree paths exist, asked in one batch before a resolve reads the
   * worktree's .gitattributes (natively, on threads: one lstat at a time from JavaScript cost
   * ~17 µs locally, a round trip each on a network filesystem; most find nothing). Absent:
   * each is looked for as read.
   */
  exist?: (rels: string[]) => boolean[];
  /**
   * A `.gitattributes` blob the repository lacks (a partial clone's): true when it was fetched
   * now and is to be read again; false (or absent) reads on without it.
   */
  missing?: (oid: Buffer) => boolean;
}

/** Paths resolved between two calls of the sources' check. */
const CHECK_EVERY = 4096;

/** One attribute setting of a line, by attribute number. */
interface State {
  attr: number;
  value: AttrValue;
}

interface Rule {
  pattern: Pattern;
  states: State[];
}

/** One attributes file: its pattern lines and macro definitions, in file order. */
interface AttrFile {
  rules: Rule[];
  macros: { attr: number; states: State[] }[];
}

/** A directory's view: the rules that apply, highest precedence first (info excluded). */
interface Frame {
  rules: Rule[];
}

/**
 * The attributes of one checkout: the files read once (in-tree ones lazily, per directory, as
 * paths ask for them), and the resolution of paths to values of the tracked names.
 */
export class Attributes {
  private readonly names: Names;
  /** Names defined as macros anywhere (always tracked: they may expand to tracked names). */
  private readonly macroNames = new Set<string>(['binary']);
  /** Per attribute number: its macro's settings, as git picks the definition (top wins). */
  private macroOf: (State[] | undefined)[] = [];
  /** builtin, system, global (lowest first), then the top directory's file (once read). */
  private readonly below: AttrFile[] = [];
  private readonly info: AttrFile;
  private readonly frames = new Map<string, Frame>();
  private readonly blobs: Map<string, number>;
  private readonly outputNames: string[];
  private readonly outputIds: number[];
  /** No rule anywhere can set a tracked name (so every path gets the all-unspecified set). */
  private trivial: boolean | undefined;
  private readonly slots: Slot[] = [];

  /**
   * `names`: the attribute names to resolve (default: what the conversions read); 'all' for
   * every name (as `git check-attr -a`).
   */
  constructor(
    private readonly src: AttributeSources,
    names: readonly string[] | 'all' = CONVERSION_ATTRIBUTES,
  ) {
    this.names = new Names(names === 'all' ? null : new Set(names));
    this.blobs = src.list ? attributeFiles(src.list) : new Map();
    for (const dir of src.removed ?? []) this.noWorktreeFile.add(dir);
    const env = src.env ?? process.env;
    // Macros can only be defined in these files: parse them all, learn every macro name, and
    // only then keep the settings of tracked names (a macro may expand to one).
    const parsed: ParsedLine[][] = [this.parseLines([BUILTIN], '[builtin]', true)];
    if (!parseBool(env['GIT_ATTR_NOSYSTEM'] ?? 'false')) {
      parsed.push(this.parseFile(SYSTEM_ATTRIBUTES));
    }
    const global = globalAttributesFile(src.repo, env);
    if (global !== undefined) parsed.push(this.parseFile(global));
    parsed.push(this.readInTree(''));
    const infoFile = join(src.repo.commonDir, 'info', 'attributes');
    // Named as git names it: relative to the worktree top, where git runs, when inside it.
    const fromTop = src.repo.worktree ? relative(src.repo.worktree, infoFile) : '..';
    parsed.push(this.parseFile(infoFile, fromTop.startsWith('..') ? infoFile : fromTop));
    for (const lines of parsed) {
      for (const line of lines) if (line.macro !== null) this.macroNames.add(line.macro);
    }
    const files = parsed.map((lines) => this.compile(lines));
    this.info = files.pop()!;
    this.below.push(...files);
    // git picks, per macro name, the definition nearest the top: info, then the top
    // directory's file, global, system, builtin; the last one within a file.
    for (const file of [this.info, ...[...files].reverse()]) {
      for (let m = file.macros.length - 1; m >= 0; m--) {
        const { attr, states } = file.macros[m]!;
        if (this.macroOf[attr] === undefined) this.macroOf[attr] = states;
      }
    }
    this.outputNames = names === 'all' ? [] : [...names];
    this.outputIds = this.outputNames.map((n) => this.names.id(n));
  }

  /** The names `lookup` answers for, in order (for 'all': every name seen so far). */
  get resolvedNames(): readonly string[] {
    return this.names.only === null ? this.names.list : this.outputNames;
  }

  /**
   * The values of the tracked names for one path ('/'-separated, relative to the worktree top,
   * bytes as a latin1 string), in the order of `resolvedNames`.
   */
  lookup(path: string): AttrValue[] {
    const slash = path.lastIndexOf('/');
    const dir = slash < 0 ? '' : path.slice(0, slash);
    this.fill(path, slash + 1, this.frame(dir));
    const ids = this.names.only === null ? this.names.list.map((_, i) => i) : this.outputIds;
    return ids.map((id) => {
      const v = this.slots[id];
      return v === UNKNOWN ? undefined : (v as AttrValue);
    });
  }

  /**
   * The values for many entries of a list (positions `select`, default all): the distinct value
   * sets (sets[0] is all-unspecified) and, per list entry, the number of its set (0 for entries
   * not selected).
   */
  resolve(
    entries: EntryList,
    select?: ArrayLike<number>,
  ): { sets: AttrValue[][]; ids: Uint16Array } {
    const ids = new Uint16Array(entries.count);
    const none: AttrValue[] = this.outputNames.map(() => undefined);
    const sets: AttrValue[][] = [none];
    const count = select ? select.length : entries.count;
    const worktreeFiles = count > 0 ? this.lookAhead(entries, select, count) : null;
    if (count === 0 || this.isTrivial(entries, select, worktreeFiles)) return { sets, ids };
    // Each distinct set is found through a trie of small value numbers (one level per name),
    // so a path costs a few Map lookups on integers, not a string key.
    const out = this.outputIds;
    const valueIds = out.map(() => new Map<AttrValue, number>([[undefined, 0]]));
    const root = new Map<number, unknown>();
    let lastDir = '';
    let frame = this.frame('');
    const check = this.src.check;
    for (let k = 0; k < count; k++) {
      if (check && k % CHECK_EVERY === CHECK_EVERY - 1) check();
      const i = select ? select[k]! : k;
      const path = entries.name(i);
      const slash = path.lastIndexOf('/');
      if (slash !== lastDir.length || !path.startsWith(lastDir)) {
        lastDir = slash < 0 ? '' : path.slice(0, slash);
        frame = this.frame(lastDir);
      }
      this.fill(path, slash + 1, frame);
      let node = root;
      let none = true;
      for (let j = 0; j < out.length; j++) {
        const raw = this.slots[out[j]!]!;
        const slot = raw === UNKNOWN ? undefined : raw;
        let v = valueIds[j]!.get(slot);
        if (v === undefined) {
          v = valueIds[j]!.size;
          valueIds[j]!.set(slot, v);
        }
        if (v !== 0) none = false;
        let next = node.get(v) as Map<number, unknown> | number | undefined;
        if (next === undefined) {
          if (j === out.length - 1) {
            next = none ? 0 : sets.length;
            if (next !== 0) {
              if (next > 0xffff) throw new RangeError('more than 65535 distinct attribute sets');
              sets.push(
                out.map((a) =>
                  this.slots[a] === UNKNOWN ? undefined : (this.slots[a] as AttrValue),
                ),
              );
            }
          } else {
            next = new Map<number, unknown>();
          }
          node.set(v, next);
        }
        if (j === out.length - 1) ids[i] = next as number;
        else node = next as Map<number, unknown>;
      }
    }
    return { sets, ids };
  }

  /**
   * Whether no path of the selection can get a tracked name: no rule sets one in the files read
   * so far nor in any in-tree file the selection's directories could read. Reads those files.
   */
  /**
   * Whether no rule can apply to the selection. `worktreeFiles`: how many of its directories'
   * .gitattributes the look-ahead found in the worktree (null: it did not look); with none,
   * the rules can only come from the list's own files and those already read, so the frames of
   * its directories need not be built one by one (~0.17 s for the 18,000 directories of a 1%
   * switch of a million files).
   */
  private isTrivial(
    entries: EntryList,
    select: ArrayLike<number> | undefined,
    worktreeFiles: number | null,
  ): boolean {
    if (this.trivial === false) return false;
    if ([this.info, ...this.below].some((f) => f.rules.length > 0)) return (this.trivial = false);
    if (worktreeFiles === 0 && [...this.dirFiles.values()].every((f) => f.rules.length === 0)) {
      return this.listFilesTrivial();
    }
    if (this.src.worktree === null) return this.listFilesTrivial();
    // The worktree may hold files for any directory of the selection.
    const count = select ? select.length : entries.count;
    let last = '';
    for (let k = 0; k < count; k++) {
      const name = entries.name(select ? select[k]! : k);
      const slash = name.lastIndexOf('/');
      const dir = slash < 0 ? '' : name.slice(0, slash);
      if (dir === last) continue;
      last = dir;
      if (this.frame(dir).rules.length > 0) return (this.trivial = false);
    }
    return true;
  }

  /** Whether the list's own .gitattributes (below the top's, read already) hold no rule. */
  private listFilesTrivial(): boolean {
    for (const [dir, i] of this.blobs) {
      if (dir === '') continue;
      // A blob the repository lacks (a partial clone's) is read only where it applies, so
      // that only those are fetched: not here, for a directory that may hold no file written.
      if (this.src.missing && this.src.odb.info(Buffer.from(this.src.list!.oid(i)))[0] === -2)
        return (this.trivial = false);
      if (this.frameFile(dir).rules.length > 0) return (this.trivial = false);
    }
    return true;
  }

  /** git's fill(): walk the rules from the top, first value per name wins. */
  private fill(path: string, nameAt: number, frame: Frame): void {
    const slots = this.slots;
    const n = this.names.list.length;
    for (let a = 0; a < n; a++) slots[a] = UNKNOWN;
    let rem = n;
    const rules = this.info.rules;
    for (let r = rules.length - 1; r >= 0 && rem > 0; r--) {
      const rule = rules[r]!;
      if (matches(rule.pattern, path, nameAt, false)) rem = this.fillOne(rule.states, rem);
    }
    const stack = frame.rules;
    for (let r = 0; r < stack.length && rem > 0; r++) {
      const rule = stack[r]!;
      if (matches(rule.pattern, path, nameAt, false)) rem = this.fillOne(rule.states, rem);
    }
  }

  /** git's fill_one(): a line's settings, last first; a macro set to true expands in place. */
  private fillOne(states: State[], rem: number): number {
    for (let s = states.length - 1; s >= 0 && rem > 0; s--) {
      const { attr, value } = states[s]!;
      if (this.slots[attr] !== UNKNOWN) continue;
      this.slots[attr] = value;
      rem--;
      const macro = value === true ? this.macroOf[attr] : undefined;
      if (macro !== undefined) rem = this.fillOne(macro, rem);
    }
    return rem;
  }

  /** The rules for paths in `dir`, highest precedence first (info/attributes apart). */
  private frame(dir: string): Frame {
    const known = this.frames.get(dir);
    if (known) return known;
    let frame: Frame;
    if (dir === '') {
      const rules: Rule[] = [];
      for (let f = this.below.length - 1; f >= 0; f--) {
        const file = this.below[f]!;
        for (let r = file.rules.length - 1; r >= 0; r--) rules.push(file.rules[r]!);
      }
      frame = { rules };
    } else {
      const slash = dir.lastIndexOf('/');
      const parent = this.frame(slash < 0 ? '' : dir.slice(0, slash));
      const own = this.frameFile(dir).rules;
      frame = own.length === 0 ? parent : { rules: [...[...own].reverse(), ...parent.rules] };
    }
    this.frames.set(dir, frame);
    return frame;
  }

  private readonly dirFiles = new Map<string, AttrFile>();
  private worktreePrefix: Buffer | undefined; // the worktree's path and a '/', as bytes
  /** Directories known to have no .gitattributes in the worktree (the sources' `exist`). */
  private readonly noWorktreeFile = new Set<string>();

  /**
   * The worktree's .gitattributes of every directory a resolve will visit, looked for at once:
   * how many of those not read yet are there (null: not looked for).
   */
  private lookAhead(
    entries: EntryList,
    select: ArrayLike<number> | undefined,
    count: number,
  ): number | null {
    const { exist, worktree } = this.src;
    if (!exist || worktree === null) return null;
    // Every directory of the selected entries, each once: found natively (a loop over 20,000
    // paths here, slicing each at every '/', cost ~0.1 s of a 1% switch of a million files).
    let mask: Uint8Array | null = null;
    if (select) {
      mask = new Uint8Array(entries.count);
      for (let k = 0; k < count; k++) mask[select[k]!] = 1;
    }
    const list = dirsOf(entries, mask).filter((dir) => !this.dirFiles.has(dir));
    const found = exist(list.map((dir) => `${dir}/.gitattributes`));
    let there = 0;
    list.forEach((dir, k) => {
      if (found[k]) there++;
      else this.noWorktreeFile.add(dir);
    });
    return there;
  }

  /** `dir`/.gitattributes (not the top's, read at construction), from where the direction says. */
  private frameFile(dir: string): AttrFile {
    let file = this.dirFiles.get(dir);
    if (file === undefined) {
      file = this.compile(this.readInTree(dir));
      this.dirFiles.set(dir, file);
    }
    return file;
  }

  /** The lines of `dir`/.gitattributes, from the list or the worktree as the direction says. */
  private readInTree(dir: string): ParsedLine[] {
    const rel = dir === '' ? '.gitattributes' : `${dir}/.gitattributes`;
    const macroOk = dir === '';
    const fromList = (): ParsedLine[] | null => {
      const i = this.blobs.get(dir);
      if (i === undefined) return null;
      const text = this.readBlob(i, rel);
      return text === null ? null : this.parseLines(blobLines(text), rel, macroOk, dir);
    };
    const fromWorktree = (): ParsedLine[] | null => {
      if (this.src.worktree === null || this.noWorktreeFile.has(dir)) return null;
      this.worktreePrefix ??= Buffer.from(`${this.src.worktree}/`);
      const file = Buffer.concat([this.worktreePrefix, Buffer.from(rel, 'latin1')]);
      const text = readAttrFile(file, display(rel), true, this.src.warn);
      return text === null ? null : this.parseLines(fileLines(text), rel, macroOk, dir);
    };
    const lines =
      this.src.direction === 'checkout' || this.src.rewritten?.has(dir)
        ? (fromList() ?? fromWorktree())
        : (fromWorktree() ?? fromList());
    return lines ?? [];
  }

  /** A `.gitattributes` blob's text; null when missing, not a blob, or too large (warned). */
  private readBlob(i: number, rel: string): string | null {
    const { odb, list } = this.src;
    const oid = Buffer.from(list!.oid(i));
    let info = odb.info(oid);
    if (info[0] === -2) {
      if (this.src.missing?.(oid) !== true) return null;
      info = odb.info(oid);
      if (info[0] === -2) return null;
    }
    if (info[2]! >= ATTR_MAX_FILE_SIZE) {
      this.src.warn(`ignoring overly large gitattributes blob '${display(rel)}'`);
      return null;
    }
    let obj;
    try {
      obj = odb.read(oid);
    } catch {
      return null;
    }
    return obj.type === 'blob' ? obj.data.toString('latin1') : null;
  }

  private parseFile(file: string, shown = file): ParsedLine[] {
    const text = readAttrFile(file, shown, false, this.src.warn);
    return text === null ? [] : this.parseLines(fileLines(text), shown, true);
  }

  private parseLines(lines: string[], src: string, macroOk: boolean, base = ''): ParsedLine[] {
    const out: ParsedLine[] = [];
    const shown = display(src);
    lines.forEach((line, n) => {
      const parsed = parseLine(line, shown, n + 1, macroOk, base, this.src.warn);
      if (parsed !== null) out.push(parsed);
    });
    return out;
  }

  /** Rules and macros of parsed lines, keeping only the settings of tracked names. */
  private compile(lines: ParsedLine[]): AttrFile {
    const out: AttrFile = { rules: [], macros: [] };
    for (const line of lines) {
      const states = line.states
        .filter((s) => this.names.tracked(s.name, this.macroNames))
        .map((s) => ({ attr: this.names.id(s.name), value: s.value }));
      if (line.macro !== null) {
        out.macros.push({ attr: this.names.id(line.macro), states });
      } else if (states.length > 0) {
        const pattern = compilePattern(line.pattern, line.base);
        if (pattern !== null) out.rules.push({ pattern, states });
      }
    }
    return out;
  }
}

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

/**
 * core.attributesFile (`~` expanded; relative to the worktree top, where git runs), or its
 * default $XDG_CONFIG_HOME/git/attributes ($HOME/.config/git/attributes); undefined when none.
 */
export function globalAttributesFile(repo: Repo, env: NodeJS.ProcessEnv): string | undefined {
  const home = env['HOME'];
  const configured = repo.config.get('core.attributesfile');
  if (configured === undefined) {
    const xdg = env['XDG_CONFIG_HOME'];
    if (xdg) return join(xdg, 'git', 'attributes');
    return home ? join(home, '.config', 'git', 'attributes') : undefined;
  }
  let file = configured;
  if ((file === '~' || file.startsWith('~/')) && home) file = join(home, file.slice(1));
  return file.startsWith('/') ? file : join(repo.worktree || repo.gitDir, file);
}
