/**
 * The `pcheckout` command: runCli(argv) is what dist/cli.cjs runs (from the package's one
 * bundle, dist/lib.cjs: scripts/bundle.mjs).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { inThisThread, type CheckoutSummary, type Progress } from './checkout.js';
import { addonLoadMs, addonSource } from './addon.js';
import { PcheckoutError, detailsOf } from './errors.js';
import { openRepo } from './repo/repo.js';

const HELP = `Usage: pcheckout [options] [<repo>] [<ref>] [-- <paths>…]
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

/** The version of the --json output's shape (schema/summary.schema.json); a change that
 * removes or retypes a field raises it. */
export const JSON_SCHEMA_VERSION = 1;

/** git's exit statuses: die() 128, a usage error 129. */
const EXIT_FATAL = 128;
const EXIT_USAGE = 129;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function usageError(message: string): never {
  throw new PcheckoutError('ERR_INVALID_OPTION', `${message} (see pcheckout --help)`);
}

function integerFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) usageError(`--${name} expects a whole number, got '${value}'`);
  return Number(value);
}

function racyFlag(value: string | undefined, no: boolean | undefined): 'auto' | 'always' | 'never' {
  if (no) return 'never';
  if (value === undefined) return 'auto';
  if (value === 'auto' || value === 'always' || value === 'never') return value;
  usageError(`--racy-wait expects auto, always or never, got '${value}'`);
}

function fsyncFlag(value: string): 'none' | 'file' | 'batch' {
  if (value === 'none' || value === 'file' || value === 'batch') return value;
  usageError(`--fsync expects none, file or batch, got '${value}'`);
}

class ProgressBar {
  private last = 0;
  constructor(private readonly stream: NodeJS.WriteStream) {}
  update(p: Progress): void {
    const now = Date.now();
    if (now - this.last < 80 && p.done < p.total) return;
    this.last = now;
    const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - 40));
    if (p.phase !== 'write') {
      this.stream.write(`\r\x1b[K${p.phase}…`);
      return;
    }
    const fill = p.total === 0 ? width : Math.round((p.done / p.total) * width);
    const mb = (p.bytes / 1048576).toFixed(1);
    this.stream.write(
      `\r[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${p.done}/${p.total} files, ${mb} MiB`,
    );
  }
  clear(): void {
    this.stream.write('\r\x1b[K');
  }
}

function describe(s: CheckoutSummary): string {
  const head =
    s.mode === 'materialize'
      ? `Materialized ${(s.commit ?? s.tree ?? '').slice(0, 12)}`
      : s.mode === 'restore'
        ? 'Restored from the index' // no commit: HEAD is neither read nor moved
        : s.detached
          ? `HEAD is now at ${(s.commit ?? s.tree ?? '').slice(0, 12)}`
          : `On branch ${s.ref?.replace(/^refs\/heads\//, '')}`;
  const how =
    (s.pool.used ? `by ${s.pool.workers} workers` : 'sequentially') +
    (s.filters.files > 0 ? ` (${s.filters.files} through external filters)` : '');
  const mb = (s.bytes / 1048576).toFixed(1);
  const changes =
    s.mode === 'fresh' ? '' : ` (${s.created} created, ${s.updated} updated, ${s.deleted} removed)`;
  const lines = [
    `${head}: ${s.files} files, ${s.symlinks} symlinks, ${s.gitlinks} gitlinks (${mb} MiB) written ${how} in ${(s.timings.total / 1000).toFixed(2)} s${changes}`,
  ];
  if (s.fetched) {
    lines.push(
      `fetched ${s.fetched.blobs} missing blob${s.fetched.blobs === 1 ? '' : 's'} from promisor remote '${s.fetched.remote}' first (${(s.fetched.ms / 1000).toFixed(2)} s)`,
    );
  }
  // As git reports a filter that is not required and failed (the file is left unfiltered).
  for (const f of s.filters.failed) lines.push(`error: ${f.path}: ${f.message}`);
  if (s.collisions.length > 0) {
    lines.push(
      'warning: the following paths have collided (e.g. case-sensitive paths on a case-insensitive filesystem) and only one from the same colliding group is in the working tree:',
      ...s.collisions.map((p) => `  '${p}'`),
    );
  }
  return lines.join('\n');
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Which positional is the repository and which the revision: two are <repo> <ref>; one is the
 * repository when it is a directory (a directory wins over a revision of the same name), else
 * the revision, checked out in the current directory's repository.
 */
function placeArguments(cwd: string, positionals: string[]): { repo: string; ref?: string } {
  const [first, second] = positionals;
  if (first === undefined) return { repo: cwd };
  if (second !== undefined) return { repo: resolve(cwd, first), ref: second };
  if (first !== '-' && isDirectory(resolve(cwd, first))) return { repo: resolve(cwd, first) };
  return { repo: cwd, ref: first };
}

/**
 * git reads pathspecs relative to the current directory; the API takes them from the worktree's
 * top. Until they are rebased on the way in, they are taken only at the top.
 */
function assertAtTop(start: string): void {
  const { worktree } = openRepo(start);
  if (relative(worktree, resolve(start)) !== '') {
    throw new PcheckoutError(
      'ERR_UNSUPPORTED',
      `pathspecs from a subdirectory of the worktree are not supported yet (run from ${worktree})`,
    );
  }
}

/**
 * Where a one-shot run's time goes before the checkout starts, in ms: Node's own start-up
 * (process start to the end of its bootstrap), loading pcheckout's JavaScript, and loading the
 * addon (which happens inside the checkout, and is counted in its plan phase). The writers are
 * the addon's own threads, started per checkout in microseconds: there is no pool to start.
 */
function startup(mainStart: number): { nodeMs: number; modulesMs: number; addonMs: number | null } {
  const boot = performance.nodeTiming.bootstrapComplete;
  const round = (ms: number): number => Math.round(ms * 10) / 10;
  return { nodeMs: round(boot), modulesMs: round(mainStart - boot), addonMs: addonLoadMs() };
}

const OPTIONS = {
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
  'dry-run': { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** Levenshtein distance: the fewest insertions, deletions and substitutions from a to b. */
function editDistance(a: string, b: string): number {
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
function negativeValuesJoined(argv: string[]): string[] {
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
function parseFailure(err: unknown): never {
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

/** A directory the command line names that does not exist: said with that path, as git says it. */
function assertDirectory(given: string, at: string, what: string): void {
  if (isDirectory(at)) return;
  const exists = existsSync(at);
  throw new PcheckoutError(
    'ERR_NOT_A_REPOSITORY',
    `${what} '${given}': ${exists ? 'not a directory' : 'no such directory'}`,
    { path: at },
  );
}

/** What a single argument that is neither a directory nor a path-like name could be. */
function looksLikePath(arg: string): boolean {
  // No ref or revision begins with '/' or '.' (git check-ref-format); ~ is the shell's home.
  return /^(\/|\.|~)/.test(arg);
}

/**
 * A single argument taken as a revision because no such directory exists: when that fails
 * (no such revision, or no repository here to have one), the error says both readings.
 */
function ambiguousFailure(err: unknown, positionals: string[], cwd: string): unknown {
  if (positionals.length !== 1 || !(err instanceof PcheckoutError)) return err;
  if (err.code !== 'ERR_BAD_REF' && err.code !== 'ERR_NOT_A_REPOSITORY') return err;
  const arg = positionals[0]!;
  if (arg === '-' || existsSync(resolve(cwd, arg))) return err;
  return new PcheckoutError(
    err.code,
    `cannot check out '${arg}': no such directory, nor a revision here (${err.message})`,
    { ...detailsOf(err), path: resolve(cwd, arg), cause: err },
  );
}

async function main(argv: string[]): Promise<number> {
  const mainStart = performance.now();
  let parsed;
  try {
    parsed = parseArgs({
      args: negativeValuesJoined(argv),
      allowPositionals: true,
      tokens: true,
      options: OPTIONS,
    });
  } catch (err) {
    parseFailure(err);
  }
  const { values, tokens } = parsed;
  const terminator = tokens.find((t) => t.kind === 'option-terminator')?.index ?? Infinity;
  const positionals: string[] = [];
  const paths: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') (t.index > terminator ? paths : positionals).push(t.value);
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`pcheckout ${version()}\n`);
    return 0;
  }
  if (positionals.length > 2) usageError(`too many arguments: ${positionals.slice(2).join(' ')}`);
  // -C stacks as git's does: each relative path from the previous one.
  const cwd = (values.C ?? []).reduce((dir, p) => {
    if (p === '') return dir;
    const next = resolve(dir, p);
    assertDirectory(p, next, 'cannot change to');
    return next;
  }, '.');
  const { repo, ref } = placeArguments(cwd, positionals);
  // A repository named that is not there is named in the error (not the directory above it).
  if (positionals.length === 2) assertDirectory(positionals[0]!, repo, 'cannot check out');
  if (positionals.length === 1 && ref !== undefined && looksLikePath(ref)) {
    assertDirectory(ref, resolve(cwd, ref), 'cannot check out');
  }
  const target = values.target === undefined ? undefined : resolve(cwd, values.target);
  if (target !== undefined && values.restore) {
    usageError('--target cannot be combined with --restore');
  }
  if (paths.length > 0 && target === undefined) assertAtTop(repo);
  const workers = integerFlag('workers', values.workers);
  const threshold = integerFlag('threshold', values.threshold);
  const bar =
    !values.quiet && !values.json && process.stderr.isTTY
      ? new ProgressBar(process.stderr)
      : undefined;
  const controller = new AbortController();
  // The first signal stops the checkout where it can stop cleanly (no index written, locks
  // released); a second one exits at once (the locks are still released, at exit).
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interruptedBy !== undefined) process.exit(128 + osConstants.signals[signal]);
    interruptedBy = signal;
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  try {
    const common = {
      ...(ref !== undefined ? { ref } : {}),
      ...(paths.length > 0 ? { paths } : {}),
      ...(workers !== undefined ? { workers } : {}),
      ...(threshold !== undefined ? { threshold } : {}),
      ...(bar ? { onProgress: (p: Progress) => bar.update(p) } : {}),
      signal: controller.signal,
      racyWait: racyFlag(values['racy-wait'], values['no-racy-wait']),
      ...(values.fsync !== undefined ? { fsync: fsyncFlag(values.fsync) } : {}),
      ...(values.force ? { force: true } : {}),
      ...(values['dry-run'] ? { dryRun: true } : {}),
    };
    // On this thread: a one-shot process has no event loop to keep serving.
    let summary: CheckoutSummary;
    try {
      summary =
        target !== undefined
          ? await inThisThread.materialize(repo, target, common)
          : await inThisThread.checkout(repo, {
              ...common,
              ...(values.restore ? { restore: true } : {}),
            });
    } catch (err) {
      throw ambiguousFailure(err, positionals, cwd);
    }
    bar?.clear();
    if (summary.newBranch?.upstream && !values.quiet && !values.json) {
      // On stdout, as git prints it.
      process.stdout.write(
        `branch '${summary.newBranch.name}' set up to track '${summary.newBranch.upstream}'.\n`,
      );
    }
    // git's warnings go to stderr whatever the verbosity (and in the JSON summary).
    if (!values.json) for (const w of summary.warnings) process.stderr.write(`warning: ${w}\n`);
    if (summary.dryRun && !values.json) {
      // As git diff --name-status lists them; what would refuse the checkout, as it would.
      if (summary.stops) {
        process.stderr.write(`pcheckout: ${summary.stops.code}: ${summary.stops.message}\n`);
        return 1;
      }
      // A partial clone's missing blobs are not fetched by a dry run: how many would be.
      if (summary.fetched) {
        const n = summary.fetched.blobs;
        process.stderr.write(
          `pcheckout: would fetch ${n} missing blob${n === 1 ? '' : 's'} from promisor remote '${summary.fetched.remote}'\n`,
        );
      }
      const c = summary.changes!;
      const lines = [
        ...c.created.map((p) => `A\t${p}`),
        ...c.updated.map((p) => `M\t${p}`),
        ...c.deleted.map((p) => `D\t${p}`),
      ];
      if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
      return 0;
    }
    if (values.json) {
      const source = addonSource();
      const out = {
        schema: JSON_SCHEMA_VERSION,
        ...summary,
        startup: startup(mainStart),
        addon: source ? { kind: source.kind, file: source.file } : null,
      };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      // A dry run that would stop exits 1, as without --json.
      if (summary.dryRun && summary.stops) return 1;
    } else if (!values.quiet) process.stderr.write(`${describe(summary)}\n`);
    else if (summary.collisions.length > 0)
      process.stderr.write(`${describe(summary).split('\n').slice(1).join('\n')}\n`);
    // As git: a failed post-checkout hook fails the command (status 1), after the checkout.
    return summary.hook !== null && summary.hook.status !== 0 ? 1 : 0;
  } finally {
    bar?.clear();
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}

/** The signals that stop a checkout cleanly (git's sigchain covers the same ones). */
const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
let interruptedBy: NodeJS.Signals | undefined;

/** The exit status of a failure, as git's: usage 129, stopped by signal n 128 + n, else 128. */
function exitStatus(err: unknown): number {
  if (!(err instanceof PcheckoutError)) return EXIT_FATAL;
  if (err.code === 'ERR_INVALID_OPTION') return EXIT_USAGE;
  if (err.code === 'ERR_ABORTED' && interruptedBy !== undefined) {
    return 128 + osConstants.signals[interruptedBy];
  }
  return EXIT_FATAL;
}

/** A failure as --json prints it: {"schema":1,"error":{code, message, and what it names}}. */
function errorJson(err: unknown): object {
  const e =
    err instanceof PcheckoutError
      ? err
      : new PcheckoutError('ERR_INTERNAL', `internal error: ${(err as Error)?.stack ?? err}`);
  return {
    schema: JSON_SCHEMA_VERSION,
    error: {
      code: e.code,
      message: e.message,
      ...(e.path !== undefined ? { path: e.path } : {}),
      ...(e.oid !== undefined ? { oid: e.oid } : {}),
      ...(e.paths !== undefined ? { paths: e.paths } : {}),
      ...(e.overwrite !== undefined ? { overwrite: e.overwrite } : {}),
      ...(e.written !== undefined ? { written: e.written } : {}),
    },
  };
}

/** Whether the command line asks for --json (read before parsing: a usage error needs it too). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** Runs the command line `argv` (without node and the script); sets process.exitCode. */
export function runCli(argv: string[]): Promise<void> {
  return main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (err instanceof PcheckoutError) {
        process.stderr.write(`pcheckout: ${err.code}: ${err.message.split('\n').join('\n  ')}\n`);
      } else {
        process.stderr.write(`pcheckout: internal error: ${(err as Error)?.stack ?? err}\n`);
      }
      if (wantsJson(argv)) process.stdout.write(`${JSON.stringify(errorJson(err), null, 2)}\n`);
      process.exitCode = exitStatus(err);
    },
  );
}
