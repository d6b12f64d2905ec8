/**
 * What each entry's bytes go through between blob and file, decided as git's convert.c decides
 * it (convert_attrs): the `text`/`crlf`/`eol` attributes with core.autocrlf and core.eol give the
 * end-of-line action, `ident` the $Id$ expansion, `working-tree-encoding` the re-encoding, and
 * `filter` a configured driver. The byte work is native (native/convert/convert.cc); entries whose
 * driver has a command are written outside the pool, by the filter step (write/filtered.ts),
 * which applies the same conversions before the smudge filter, as git does.
 *
 * The result is a small table of distinct conversions and one number per entry, so a chunk of
 * files carries a handful of descriptors, not one per file.
 */
import type { NativeConversion, NativeOdb } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import type { GitConfig } from '../repo/config.js';
import type { Repo } from '../repo/repo.js';
import { Attributes, type AttrValue } from './attributes.js';
import { attributeFiles } from './attributes-read.js';
import { hasCommand, readFilterDrivers, type FilterDriver } from './drivers.js';
import type { EntryList } from './entries.js';

/** git's crlf_action once settled (native/convert/convert.h CrlfAction). */
export const CRLF_BINARY = 0;
export const CRLF_TEXT_INPUT = 1;
export const CRLF_TEXT_CRLF = 2;
export const CRLF_AUTO_INPUT = 3;
export const CRLF_AUTO_CRLF = 4;

/** One conversion: the native descriptor, plus the filter driver the native side never sees. */
export interface Conversion {
  crlf: number;
  ident: boolean;
  /** git's in-memory $Id$ routine (not its streaming one): see native/convert/convert.h. */
  identInCore: boolean;
  encoding: string | null;
  /** The configured filter driver (`filter=<name>` with some filter.<name>.* key set), or null. */
  driver: string | null;
  /**
   * Whether the entry is written by the filter step, outside the pool (git's sequential pass):
   * its driver has a command, or is required with nothing to run for an entry git cannot
   * stream (git then fails it: "smudge filter <name> failed"). A driver with nothing to run is
   * otherwise no filter (git streams the blob, or converts it in a parallel worker).
   */
  filtered: boolean;
}

export interface Conversions {
  /** Distinct conversions; [0] is none (the blob's bytes as they are). */
  profiles: Conversion[];
  /** Per entry of the list they were planned for: its profile (0 for none). */
  ids: Uint16Array;
}

export const NO_CONVERSION: Conversion = {
  crlf: CRLF_BINARY,
  ident: false,
  identInCore: false,
  encoding: null,
  driver: null,
  filtered: false,
};

/** Whether checking out with `c` writes the blob's bytes unchanged (and needs no driver). */
export function checkoutIsNoop(c: Conversion): boolean {
  return (
    !c.filtered &&
    !c.ident &&
    c.encoding === null &&
    c.crlf !== CRLF_TEXT_CRLF &&
    c.crlf !== CRLF_AUTO_CRLF
  );
}

/**
 * The native part of a checkout with `c` (ident, eol, encoding: what git applies before a
 * smudge filter), or null when it changes no byte.
 */
export function nativeCheckout(c: Conversion): NativeConversion | null {
  const { crlf, ident, identInCore, encoding } = c;
  return checkoutIsNoop({ ...c, filtered: false }) ? null : { crlf, ident, identInCore, encoding };
}

/** Whether hashing a file with `c` hashes its bytes unchanged (git add would store them so). */
export function checkinIsNoop(c: Conversion): boolean {
  return c.driver === null && !c.ident && c.encoding === null && c.crlf === CRLF_BINARY;
}

// git's crlf_action before it settles (convert.c).
const UNDEFINED = -1;
const TEXT = 5;
const AUTO = 6;

/** git's same_utf_encoding(): "utf" prefixes in any case, an optional '-', the rest equal. */
function sameUtf(a: string, b: string): boolean {
  if (!/^utf/i.test(a) || !/^utf/i.test(b)) return false;
  const x = a.slice(3).replace(/^-/, '');
  const y = b.slice(3).replace(/^-/, '');
  return x.toLowerCase() === y.toLowerCase();
}

/** The config half of git's decisions: core.autocrlf, core.eol and the filter drivers. */
export class ConversionRules {
  /** core.autocrlf: 'true', 'input' or 'false'. */
  readonly autocrlf: 'true' | 'input' | 'false';
  /** core.eol: what `text` means when core.autocrlf does not say (LF unless crlf). */
  readonly eolCrlf: boolean;
  readonly drivers: Map<string, FilterDriver>;

  constructor(config: GitConfig) {
    const raw = config.get('core.autocrlf');
    this.autocrlf =
      raw !== undefined && raw.toLowerCase() === 'input'
        ? 'input'
        : config.getBool('core.autocrlf') === true
          ? 'true'
          : 'false';
    const eol = (config.get('core.eol') ?? '').toLowerCase();
    this.eolCrlf = eol === 'crlf'; // lf, native (LF here) and anything else: LF
    this.drivers = readFilterDrivers(config);
  }

  /** git's text_eol_is_crlf(). */
  private textEolIsCrlf(): boolean {
    if (this.autocrlf === 'true') return true;
    if (this.autocrlf === 'input') return false;
    return this.eolCrlf;
  }

  /** Whether filter.<name>.* is configured (git then has a driver for it). */
  hasDriver(name: string): boolean {
    return this.drivers.has(name);
  }

  /**
   * The conversion for an entry with these attribute values (in CONVERSION_ATTRIBUTES order:
   * text, eol, crlf, ident, filter, working-tree-encoding). `path` names the entry in errors.
   */
  conversion(values: readonly AttrValue[], path: string): Conversion {
    const [text, eol, crlf, ident, filter, encoding] = values;
    let action = checkCrlf(text);
    if (action === UNDEFINED) action = checkCrlf(crlf);
    if (action !== CRLF_BINARY) {
      const eolAttr = eol === 'lf' ? 'lf' : eol === 'crlf' ? 'crlf' : null;
      if (action === AUTO && eolAttr === 'lf') action = CRLF_AUTO_INPUT;
      else if (action === AUTO && eolAttr === 'crlf') action = CRLF_AUTO_CRLF;
      else if (eolAttr === 'lf') action = CRLF_TEXT_INPUT;
      else if (eolAttr === 'crlf') action = CRLF_TEXT_CRLF;
    }
    if (action === TEXT) action = this.textEolIsCrlf() ? CRLF_TEXT_CRLF : CRLF_TEXT_INPUT;
    if (action === UNDEFINED) {
      action =
        this.autocrlf === 'true'
          ? CRLF_AUTO_CRLF
          : this.autocrlf === 'input'
            ? CRLF_AUTO_INPUT
            : CRLF_BINARY;
    }
    let enc: string | null = null;
    if (encoding === true) {
      // git dies here (a set or unset value has no name: "-x" reads as an empty one).
      throw new PcheckoutError(
        'ERR_BAD_ATTRIBUTE',
        `true/false are no valid working-tree-encodings (${path})`,
        { path },
      );
    }
    if (typeof encoding === 'string' && encoding !== '' && !sameEncoding(encoding, 'UTF-8')) {
      enc = encoding;
    }
    const driver = typeof filter === 'string' && this.hasDriver(filter) ? filter : null;
    const withCommand = driver !== null && this.driverHasCommand(driver);
    // git streams (and then uses its streaming $Id$ routine) unless the entry has a driver with
    // a command, an encoding, or text=auto whose output may be CRLF.
    const streamable = !withCommand && enc === null && action !== AUTO && action !== CRLF_AUTO_CRLF;
    if (action === AUTO) action = this.textEolIsCrlf() ? CRLF_AUTO_CRLF : CRLF_AUTO_INPUT;
    return {
      crlf: action,
      ident: ident === true,
      identInCore: ident === true && !streamable,
      encoding: enc,
      driver,
      filtered:
        withCommand || (driver !== null && this.drivers.get(driver)!.required && !streamable),
    };
  }

  /** Whether filter.<name> has a smudge, clean or process command. */
  driverHasCommand(name: string): boolean {
    const d = this.drivers.get(name);
    return d !== undefined && hasCommand(d);
  }

  /**
   * Conversions for the entries `select` of `entries` (default all), from their attributes:
   * the distinct conversions and one number per entry.
   */
  plan(attributes: Attributes, entries: EntryList, select?: ArrayLike<number>): Conversions {
    const { sets, ids: setIds } = attributes.resolve(entries, select);
    const noAttributes = sets.length === 1;
    // Each attribute set maps to one conversion (the path only names errors).
    const firstOf = new Int32Array(sets.length).fill(-1);
    const count = select ? select.length : entries.count;
    for (let k = 0; k < count; k++) {
      const i = select ? select[k]! : k;
      if (firstOf[setIds[i]!] === -1) firstOf[setIds[i]!] = i;
    }
    const profiles: Conversion[] = [NO_CONVERSION];
    const profileOfSet = new Uint16Array(sets.length);
    const known = new Map<string, number>([[JSON.stringify(NO_CONVERSION), 0]]);
    sets.forEach((values, s) => {
      if (firstOf[s] === -1) return;
      const c = this.conversion(values, entries.display(firstOf[s]!));
      const key = JSON.stringify(c);
      let p = known.get(key);
      if (p === undefined) {
        p = profiles.length;
        known.set(key, p);
        profiles.push(c);
      }
      profileOfSet[s] = p;
    });
    if (noAttributes && profileOfSet[0] === 0) {
      return { profiles, ids: new Uint16Array(entries.count) };
    }
    const ids = new Uint16Array(entries.count);
    for (let k = 0; k < count; k++) {
      const i = select ? select[k]! : k;
      ids[i] = profileOfSet[setIds[i]!]!;
    }
    return { profiles, ids };
  }
}

/** git's git_path_check_crlf() on a `text` or `crlf` value. */
function checkCrlf(v: AttrValue): number {
  if (v === true) return TEXT;
  if (v === false) return CRLF_BINARY;
  if (v === 'input') return CRLF_TEXT_INPUT;
  if (v === 'auto') return AUTO;
  return UNDEFINED;
}

/** git's same_encoding(). */
function sameEncoding(a: string, b: string): boolean {
  return sameUtf(a, b) || a.toLowerCase() === b.toLowerCase();
}

/**
 * A file's content through its driver's clean command or process (git's apply_filter with
 * CAP_CLEAN); write/filters.ts FilterSession.clean. Throws where git dies (a required driver).
 */
export type CleanFilter = (driver: string, path: string, content: Buffer) => Promise<Buffer>;

/**
 * The check-in side, for the dirty check: the conversion git applies before hashing a
 * stat-dirty or racy file of the current index (attributes read as git reads them then: the
 * worktree's .gitattributes first, the index's where there is none). Built on first use: a
 * dirty check that hashes nothing reads no attributes.
 */
export class CheckinConversions {
  private attributes: Attributes | undefined;
  private rules: ConversionRules | undefined;
  /** Conversions resolved ahead for a batch of entries (prepare). */
  private readonly prepared = new Map<number, Conversion | null>();

  constructor(
    private readonly make: () => { attributes: Attributes; rules: ConversionRules },
    private readonly index: EntryList,
    private readonly blob: (oid: Buffer) => Buffer | null,
    private readonly hasCrlf: (data: Buffer) => boolean,
    private readonly cleanFilter: CleanFilter,
  ) {}

  /**
   * Resolves the conversions of index entries `entries` (in index order) at once: their
   * directories' worktree .gitattributes looked for in one batch, not one lstat per directory
   * as single lookups make them (a 1% switch of a million files, after a checkout whose files
   * are racy, hashes ~10,000 files in ~10,000 directories: ~0.2 s of lstats from JavaScript).
   */
  prepare(entries: ArrayLike<number>): void {
    if (entries.length === 0) return;
    const { attributes, rules } = this.sources();
    const { profiles, ids } = rules.plan(attributes, this.index, entries);
    for (let k = 0; k < entries.length; k++) {
      const i = entries[k]!;
      const c = profiles[ids[i]!]!;
      this.prepared.set(i, checkinIsNoop(c) ? null : c);
    }
  }

  /** Index entry i's conversion, or null when git hashes the file's bytes as they are. */
  conversionOf(i: number): Conversion | null {
    const ready = this.prepared.get(i);
    if (ready !== undefined) return ready;
    const { attributes, rules } = this.sources();
    const c = rules.conversion(attributes.lookup(this.index.name(i)), this.index.display(i));
    return checkinIsNoop(c) ? null : c;
  }

  /** The attributes and rules, made on first use. */
  private sources(): { attributes: Attributes; rules: ConversionRules } {
    if (this.attributes === undefined || this.rules === undefined)
      ({ attributes: this.attributes, rules: this.rules } = this.make());
    return { attributes: this.attributes, rules: this.rules };
  }

  /** Whether entry i's blob is text with CRLFs (git's has_crlf_in_index). */
  indexHasCrlf(i: number): boolean {
    const data = this.blob(this.index.oid(i));
    return data !== null && this.hasCrlf(data);
  }

  path(i: number): string {
    return this.index.display(i);
  }

  /**
   * Entry i's file content through its filter driver, the first step of git's convert_to_git
   * (the content as it is when the entry has no driver, or its driver nothing to clean with).
   */
  async filtered(i: number, c: Conversion, content: Buffer): Promise<Buffer> {
    return c.driver === null ? content : this.cleanFilter(c.driver, this.index.name(i), content);
  }
}

export interface ConversionInput {
  repo: Repo;
  odb: NativeOdb;
  /** The result index: the entries written and the .gitattributes blobs that apply. */
  result: EntryList;
  /** The result positions of the regular files written. */
  files: ArrayLike<number>;
  /** The worktree whose .gitattributes files apply (null: a fresh one, or a materialize). */
  worktree: string | null;
  /** git's attribute direction for the command (checkout-index and `-- paths`: checkin). */
  direction: 'checkout' | 'checkin';
  warn: (message: string) => void;
  /** Throws when the call is aborted (checked while the paths' attributes are resolved). */
  check?: () => void;
  /** Which worktree paths exist, in one batch (AttributeSources.exist). */
  exist?: (rels: string[]) => boolean[];
  /** A `.gitattributes` blob the repository lacks (see AttributeSources.missing). */
  missing?: (oid: Buffer) => boolean;
  /** The worktree's .gitattributes files the checkout deletes (AttributeSources.removed). */
  removed?: ReadonlySet<string>;
}

/**
 * The conversions of the files a checkout writes; null when none converts (the common case,
 * decided without resolving any path when no attribute file sets a conversion name and
 * core.autocrlf is off).
 */
export function planConversions(input: ConversionInput): Conversions | null {
  if (input.files.length === 0) return null;
  const { repo, odb, result, worktree, direction, warn, check, missing, exist, removed } = input;
  // The .gitattributes files this checkout writes: a check-in (restore) reads them as written.
  const rewritten = new Set<string>();
  if (direction === 'checkin') {
    const written = new Uint8Array(result.count);
    for (let k = 0; k < input.files.length; k++) written[input.files[k]!] = 1;
    for (const [dir, i] of attributeFiles(result)) if (written[i] === 1) rewritten.add(dir);
  }
  const attributes = new Attributes({
    repo,
    odb,
    list: result,
    worktree,
    direction,
    rewritten,
    ...(removed ? { removed } : {}),
    warn,
    ...(check ? { check } : {}),
    ...(exist ? { exist } : {}),
    ...(missing ? { missing } : {}),
  });
  const conversions = new ConversionRules(repo.config).plan(attributes, result, input.files);
  return conversions.profiles.length === 1 ? null : conversions;
}

/** The check-in conversions of the current index's entries, for the dirty check. */
export function checkinConversions(
  repo: Repo,
  odb: NativeOdb,
  index: EntryList,
  worktree: string,
  warn: (message: string) => void,
  hasCrlf: (data: Buffer) => boolean,
  cleanFilter: CleanFilter,
  fetchNow?: (oid: Buffer) => boolean,
  exist?: (rels: string[]) => boolean[],
): CheckinConversions {
  // The dirty check decides as it goes: an index blob or attribute file a partial clone lacks
  // is fetched then, one at a time (as git fetches it on demand), via `fetchNow`.
  const read = (oid: Buffer): Buffer | null => {
    const obj = odb.read(oid);
    return obj.type === 'blob' ? obj.data : null;
  };
  return new CheckinConversions(
    () => ({
      attributes: new Attributes({
        repo,
        odb,
        list: index,
        worktree,
        direction: 'checkin',
        warn,
        ...(fetchNow ? { missing: fetchNow } : {}),
        ...(exist ? { exist } : {}),
      }),
      rules: new ConversionRules(repo.config),
    }),
    index,
    (oid) => {
      try {
        return read(oid);
      } catch {
        if (fetchNow === undefined || odb.info(oid)[0] !== -2 || !fetchNow(oid)) return null;
        try {
          return read(oid);
        } catch {
          return null;
        }
      }
    },
    hasCrlf,
    cleanFilter,
  );
}
