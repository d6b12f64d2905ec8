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
import {
  descriptorBytes,
  isDescriptorPath,
  openStartPath,
  type RepoPath,
} from './repo/byte-path.js';
import { directoryArguments } from './cli/raw-args.js';
import {
  HELP,
  OPTIONS,
  fsyncFlag,
  integerFlag,
  negativeValuesJoined,
  parseFailure,
  racyFlag,
  usageError,
} from './cli/args.js';
import { ProgressBar, describe } from './cli/report.js';

export { nearestOption } from './cli/args.js';

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
function assertAtTop(given: RepoPath): void {
  const start = openStartPath(given);
  try {
    const { worktree } = openRepo(start.path);
    if (relative(worktree, resolve(start.path)) !== '') {
      throw new PcheckoutError(
        'ERR_UNSUPPORTED',
        `pathspecs from a subdirectory of the worktree are not supported yet (run from ${worktree})`,
      );
    }
  } catch (err) {
    throw start.relabel(err);
  } finally {
    start.close();
  }
}

/** The repository as the call takes it: a directory argument that is not UTF-8 as its bytes. */
function repoArgument(repo: string): RepoPath {
  return isDescriptorPath(repo) ? descriptorBytes(repo) : repo;
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

/** The command line parsed: the options, the positionals before `--`, the pathspecs after. */
function parseCommandLine(argv: string[]) {
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
  return { values, positionals, paths };
}

/** --store and --store-max-bytes as the store option (a relative directory from -C's cwd). */
function storeFlags(
  values: ReturnType<typeof parseCommandLine>['values'],
  cwd: string,
): { store?: { dir: string; maxBytes?: number; link?: boolean } } {
  const max = integerFlag('store-max-bytes', values['store-max-bytes']);
  if (values.store === undefined) {
    if (max !== undefined) usageError('--store-max-bytes needs --store');
    if (values['store-link']) usageError('--store-link needs --store');
    return {};
  }
  if (values.store === '') usageError('--store expects a directory');
  return {
    store: {
      dir: resolve(cwd, values.store),
      ...(max !== undefined ? { maxBytes: max } : {}),
      ...(values['store-link'] ? { link: true } : {}),
    },
  };
}

/**
 * Where the call runs: the directory after -C, the repository and revision the positionals
 * name, the materialize target; each path checked as git checks it.
 */
function placeCall(
  values: ReturnType<typeof parseCommandLine>['values'],
  positionals: string[],
  paths: string[],
): { cwd: string; repo: RepoPath; ref: string | undefined; target: string | undefined } {
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
  if (target !== undefined && isDescriptorPath(target)) {
    usageError('a --target path that is not valid UTF-8 is not supported');
  }
  if (target !== undefined && values.restore) {
    usageError('--target cannot be combined with --restore');
  }
  const repoPath = repoArgument(repo);
  if (paths.length > 0 && target === undefined) assertAtTop(repoPath);
  return { cwd, repo: repoPath, ref, target };
}

async function main(argv: string[]): Promise<number> {
  const mainStart = performance.now();
  const { values, positionals, paths } = parseCommandLine(directoryArguments(argv));
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`pcheckout ${version()}\n`);
    return 0;
  }
  const { cwd, repo, ref, target } = placeCall(values, positionals, paths);
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
      ...storeFlags(values, cwd),
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
    return printSummary(summary, values, mainStart);
  } finally {
    bar?.clear();
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}

/** Prints what the call did (or, for a dry run, would do) as the options ask; the exit status. */
function printSummary(
  summary: CheckoutSummary,
  values: { quiet?: boolean | undefined; json?: boolean | undefined },
  mainStart: number,
): number {
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
