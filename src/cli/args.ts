/**
 * The command line's words: the help text, the options util.parseArgs reads, and the checks of
 * their values (a usage error, exit status 129, as git's for a bad option).
 */
import { PcheckoutError } from '../errors.js';

export const HELP = `Usage: pcheckout [options] [<repo>] [<ref>] [-- <paths>…]
       pcheckout [options] <ref>

Checks out <ref> (default: what HEAD points to) into the worktree of <repo> (default: the
current directory) and writes the index, in parallel. Into an empty worktree every file is
written; otherwise, as git checkout does, only what differs, and local changes or untracked
files in the way stop the checkout before anything is written.

A single argument is the repository if it is a directory, else a revision of the current
directory's repository (pcheckout main, pcheckout -): a directory wins, so to check out a
revision that is also a directory's name, name the repository too (pcheckout . <ref>).
<ref> is what git checkout takes: a branch (a name only <remote>/<name> has creates the local
branch tracking it), a tag, an id, -, @{-n}, @, ref@{n}, rev~n, rev^n, rev^{/text}, :/text.
Arguments after -- are pathspecs (git checkout [<ref>] -- <paths>; from the worktree's top
only, for now). GIT_DIR and GIT_WORK_TREE
are honoured as git honours them; the post-checkout hook runs as with git, and its failure
makes the exit status non-zero once the checkout is done.

Options:
  -C <path>             run as if started in <path> (repeatable; relative ones stack)
      --target <dir>    materialize: write the tree of <ref> into <dir>, a new or empty directory
                        outside the repository (a later run writes only the difference; its
                        record is kept in <dir>/.git); never a git repository; with --force, a
                        non-empty plain directory too; the repository is not touched
  -f, --force           overwrite local changes and untracked files in the way (git checkout -f);
                        without <ref>, reset the index and worktree to HEAD
      --restore         make the worktree match the index (git checkout-index -a -f)
  -w, --workers <n>     worker threads (0 = one per core; default: checkout.workers, else cores;
                        16 on a network filesystem)
  -t, --threshold <n>   use workers only above this many files (default:
                        checkout.thresholdForParallelism, else 100)
      --racy-wait <when> auto (default): wait for the clock to leave the second of the
                        newest file before writing the index only when git's re-hash of the
                        files written in that second would cost more; always; never
                        (docs/git.md, racy git)
      --no-racy-wait    the same as --racy-wait=never
      --fsync <mode>    none, file or batch: make the worktree durable before the index
                        (default: pcheckout.fsync, else none; docs/filesystems.md)
      --store <dir>     a store of worktree-ready files shared by every run that names it:
                        files it holds are reflinked (or copied) in, the rest written and
                        added (docs/store.md)
      --store-max-bytes <n>  keep the store under n bytes (least recently used go first)
      --store-link      hard-link files from the store: read-only files, shared by every tree
      --dry-run         touch nothing: list what would be created (A), updated (M) and
                        deleted (D), or what stops the checkout (exit 1)
      --json            print the summary as JSON on stdout, or an error as
                        {"schema":1,"error":{...}} (schema/summary.schema.json)
  -q, --quiet           print nothing but errors
  -h, --help            show this help
  -v, --version         show the version

Exit status, as git's: 0 done; 1 a failed post-checkout hook, or a dry run that would stop;
128 a fatal error (pcheckout: <code>: <message>); 129 a usage error; 128 + n killed by signal n.
`;

export function usageError(message: string): never {
  throw new PcheckoutError('ERR_INVALID_OPTION', `${message} (see pcheckout --help)`);
}

export function integerFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) usageError(`--${name} expects a whole number, got '${value}'`);
  return Number(value);
}

export function racyFlag(
  value: string | undefined,
  no: boolean | undefined,
): 'auto' | 'always' | 'never' {
  if (no) return 'never';
  if (value === undefined) return 'auto';
  if (value === 'auto' || value === 'always' || value === 'never') return value;
  usageError(`--racy-wait expects auto, always or never, got '${value}'`);
}

export function fsyncFlag(value: string): 'none' | 'file' | 'batch' {
  if (value === 'none' || value === 'file' || value === 'batch') return value;
  usageError(`--fsync expects none, file or batch, got '${value}'`);
}

export const OPTIONS = {
  C: { type: 'string', short: 'C', multiple: true },
  workers: { type: 'string', short: 'w' },
  force: { type: 'boolean', short: 'f' },
  restore: { type: 'boolean' },
  target: { type: 'string' },
  threshold: { type: 'string', short: 't' },
  json: { type: 'boolean' },
  'no-racy-wait': { type: 'boolean' },
  'racy-wait': { type: 'string' },
  fsync: { type: 'string' },
  store: { type: 'string' },
  'store-max-bytes': { type: 'string' },
  'store-link': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** Levenshtein distance: the fewest insertions, deletions and substitutions from a to b. */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length]!;
}

/** The known long option nearest to a mistyped one, when it is near (as git's "did you mean"). */
export function nearestOption(typed: string): string | undefined {
  const name = typed.replace(/^--?/, '').split('=')[0]!;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const known of Object.keys(OPTIONS)) {
    if (known.length === 1) continue;
    const d = editDistance(name, known);
    if (d < bestDistance) [best, bestDistance] = [known, d];
  }
  // Near: at most 2 edits, and fewer than half the name (so that --x suggests nothing).
  return best !== undefined && bestDistance <= Math.min(2, Math.floor(name.length / 2))
    ? best
    : undefined;
}

/**
 * An option's value that looks like a negative number (`-w -1`) joined to it (`--workers=-1`):
 * util.parseArgs would call it ambiguous, where the range check below says what is wrong.
 */
export function negativeValuesJoined(argv: string[]): string[] {
  const takesValue = (arg: string): string | null => {
    for (const [name, o] of Object.entries(OPTIONS)) {
      if (o.type !== 'string') continue;
      if (arg === `--${name}` || ('short' in o && arg === `-${o.short}`)) return name;
    }
    return null;
  };
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = takesValue(arg);
    const next = argv[i + 1];
    if (name !== null && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** util.parseArgs's complaint as a usage error: its first line, or an unknown option's "did you mean". */
export function parseFailure(err: unknown): never {
  const e = err as { code?: string; message: string };
  const unknown = /^Unknown option '([^']+)'/.exec(e.message);
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const near = unknown[1]!.startsWith('--') ? nearestOption(unknown[1]!) : undefined;
    usageError(
      `unknown option '${unknown[1]}'${near !== undefined ? `; did you mean --${near}?` : ''}`,
    );
  }
  // util.parseArgs explains itself over several lines; the first one says what is wrong.
  usageError(e.message.split('\n')[0]!);
}
