/**
 * External filter drivers as git runs them (gitattributes(5), "filter"): one-shot
 * `filter.<driver>.smudge` / `.clean` commands, one child per file, and long-running
 * `filter.<driver>.process` drivers speaking the filter protocol version 2 over pkt-lines, one
 * child per command for the whole checkout, started on first use and shut down at the end.
 * Paths are latin1 strings here (one char per byte), as the entry lists keep them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PcheckoutError } from '../errors.js';
import type { FilterDriver } from '../plan/drivers.js';
import { FLUSH, PacketReader, ProtocolError, contentPackets, textPacket } from './pktline.js';

/** What git sends with a smudge request: see checkout_metadata. */
export interface SmudgeMeta {
  /** The ref checked out (refs/heads/main, refs/tags/v1, …), or null. */
  ref: string | null;
  /** The commit (or tree) checked out, or null (a checkout from the index). */
  treeish: string | null;
  /** The blob's id. */
  blob: string;
}

/**
 * 'none': the driver has nothing to run for this direction (no such command, or a process
 * without the capability): git's apply_filter returns 0 and says nothing; the content stays as
 * it is, unless the driver is required.
 */
export type FilterOutcome =
  | { status: 'ok'; data: Buffer }
  | { status: 'delayed' }
  | { status: 'none' }
  | { status: 'failed'; message: string };

type Direction = 'smudge' | 'clean';

// git's prepare_shell_cmd: a command with none of these runs without a shell.
const SHELL_META = /[|&;<>()$`\\"' \t\n*?[#~=%]/;

function spawnCommand(cmd: string, cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  const [file, args] = SHELL_META.test(cmd) ? ['/bin/sh', ['-c', cmd, cmd]] : [cmd, []];
  return spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
}

/** git's sq_quote_buf: the path in single quotes, each ' and ! closed, escaped and reopened. */
function shellQuote(s: string): string {
  return `'${s.replace(/['!]/g, (c) => `'\\${c}'`)}'`;
}

/** A one-shot command with %f replaced by the quoted path and %% by %, as git expands it. */
export function expandCommand(cmd: string, path: string): string {
  return cmd.replace(/%(%|f)/g, (_, c: string) => (c === '%' ? '%' : shellQuote(path)));
}

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

/** Exit status in git's words: "failed 3", "died of signal 15". */
function exitWords(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `died of signal ${signal}` : `failed ${code}`;
}

/**
 * Runs a one-shot filter command for one file: through the shell, content on stdin, the
 * result from stdout, the worktree's top as its directory (git's apply_single_file_filter).
 * A command that does not read its input is fine (git ignores EPIPE); a non-zero exit fails.
 */
function runOneShot(
  cmd: string,
  path: string,
  input: Buffer,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<FilterOutcome> {
  const expanded = expandCommand(cmd, display(path));
  return new Promise((resolve) => {
    const child = spawnCommand(expanded, cwd, env);
    const out: Buffer[] = [];
    child.on('error', (err) => {
      resolve({ status: 'failed', message: `cannot run ${cmd}: ${err.message}` });
    });
    child.stdin!.on('error', () => {}); // EPIPE: the command did not read it all
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('close', (code, signal) => {
      if (code !== 0) {
        resolve({
          status: 'failed',
          message: `external filter '${cmd}' ${exitWords(code, signal)}`,
        });
      } else {
        resolve({ status: 'ok', data: Buffer.concat(out) });
      }
    });
    child.stdin!.end(input);
  });
}

const CAPABILITIES = ['clean', 'smudge', 'delay'] as const;
type Capability = (typeof CAPABILITIES)[number];

/** The reasons a request to a long-running filter failed, as git tells them apart. */
class FilterStatusError extends Error {
  constructor(readonly status: string) {
    super(`the filter answered status=${status || '(none)'}`);
  }
}

/** One long-running filter process (git's sub-process.c and apply_multi_file_filter). */
class LongRunningFilter {
  private readonly reader: PacketReader;
  private exited: Promise<void>;
  readonly capabilities = new Set<Capability>();
  /** Capabilities dropped after the filter answered status=abort. */
  readonly aborted = new Set<Capability>();
  /** The request before the next one: one conversation on the pipes at a time. */
  private turn: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly cmd: string,
    private readonly child: ChildProcess,
  ) {
    child.stdin!.on('error', () => {}); // a dead filter: noticed when its output ends
    this.reader = new PacketReader(child.stdout!);
    this.exited = new Promise((resolve) => {
      child.on('close', () => resolve());
      child.on('error', (err) => {
        this.reader.fail(err);
        resolve();
      });
    });
  }

  /** Starts the process and shakes hands; a failed start leaves nothing running. */
  static async start(cmd: string, cwd: string, env: NodeJS.ProcessEnv): Promise<LongRunningFilter> {
    const child = spawnCommand(cmd, cwd, env);
    const filter = new LongRunningFilter(cmd, child);
    try {
      await filter.handshake();
    } catch (err) {
      await filter.stop();
      throw err;
    }
    return filter;
  }

  /** Runs `request` once every request asked for before it has had its answer. */
  private inTurn<T>(request: () => Promise<T>): Promise<T> {
    const run = this.turn.then(request, request);
    this.turn = run.catch(() => {});
    return run;
  }

  private send(packets: Buffer[]): void {
    this.child.stdin!.write(Buffer.concat(packets));
  }

  private async handshake(): Promise<void> {
    this.send([textPacket('git-filter-client'), textPacket('version=2'), FLUSH]);
    const welcome = await this.reader.readLine();
    if (welcome !== 'git-filter-server') {
      throw new ProtocolError(
        `unexpected line '${welcome ?? '<flush packet>'}', expected git-filter-server`,
      );
    }
    const version = await this.reader.readLine();
    if (version === null || !/^version=\d+$/.test(version)) {
      throw new ProtocolError(`unexpected line '${version ?? '<flush packet>'}', expected version`);
    }
    const extra = await this.reader.readLine();
    if (extra !== null) throw new ProtocolError(`unexpected line '${extra}', expected flush`);
    if (version !== 'version=2') {
      throw new ProtocolError(`version ${version.slice('version='.length)} not supported`);
    }
    this.send([...CAPABILITIES.map((c) => textPacket(`capability=${c}`)), FLUSH]);
    for (const line of await this.reader.readList()) {
      if (!line.startsWith('capability=')) continue;
      const cap = line.slice('capability='.length);
      if (!(CAPABILITIES as readonly string[]).includes(cap)) {
        // git dies here, whatever filter.<driver>.required says.
        throw new PcheckoutError(
          'ERR_FILTER_FAILED',
          `subprocess '${this.cmd}' requested unsupported capability '${cap}'`,
        );
      }
      this.capabilities.add(cap as Capability);
    }
  }

  /** A status list: the last status= wins, none leaves `status` as it was. */
  private async readStatus(status: string): Promise<string> {
    for (const line of await this.reader.readList()) {
      if (line.startsWith('status=')) status = line.slice('status='.length);
    }
    return status;
  }

  /**
   * One clean or smudge request. Resolves with the content, or 'delayed'; a status other than
   * success rejects with FilterStatusError, a broken conversation with ProtocolError.
   */
  filter(lines: string[], content: Buffer, canDelay: boolean): Promise<Buffer | 'delayed'> {
    return this.inTurn(() => this.request(lines, content, canDelay));
  }

  private async request(
    lines: string[],
    content: Buffer,
    canDelay: boolean,
  ): Promise<Buffer | 'delayed'> {
    this.send([...lines.map(textPacket), FLUSH, ...contentPackets(content), FLUSH]);
    let status = await this.readStatus('');
    if (canDelay && status === 'delayed') return 'delayed';
    if (status !== 'success') throw new FilterStatusError(status);
    const data = await this.reader.readContent();
    status = await this.readStatus(status);
    if (status !== 'success') throw new FilterStatusError(status);
    return data;
  }

  /** list_available_blobs: the paths (latin1) now ready; empty when the filter is done. */
  listAvailable(): Promise<string[]> {
    return this.inTurn(() => this.requestAvailable());
  }

  private async requestAvailable(): Promise<string[]> {
    this.send([textPacket('command=list_available_blobs'), FLUSH]);
    const paths: string[] = [];
    for (const line of await this.reader.readList()) {
      if (line.startsWith('pathname=')) paths.push(line.slice('pathname='.length));
    }
    const status = await this.readStatus('');
    if (status !== 'success') throw new FilterStatusError(status);
    return paths;
  }

  /** After a broken conversation (git's subprocess_stop): SIGTERM, then wait. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }

  /** The clean shutdown: both pipes closed, which tells the filter to finish; then wait. */
  async close(): Promise<void> {
    this.child.stdin!.end();
    this.child.stdout!.destroy();
    await this.exited;
  }
}

/** A non-required failure git reports and carries on from (the file is left unfiltered). */
export interface FilterFailure {
  /** latin1, as the entry lists keep paths. */
  path: string;
  driver: string;
  message: string;
}

/**
 * The filters of one checkout: one long-running process per command, started when the first
 * file needs it, and everything that must be closed at the end.
 */
export class FilterSession {
  /** Each command's process, from the moment its start is asked for (so it starts once). */
  private readonly running = new Map<string, Promise<LongRunningFilter>>();
  /** The commands with delayed paths, in the order they first delayed one. */
  readonly delaying = new Set<string>();
  readonly failures: FilterFailure[] = [];

  constructor(
    readonly drivers: Map<string, FilterDriver>,
    private readonly cwd: string,
    /** The drivers' environment, made when the first one starts (it may run git once). */
    private readonly makeEnv: () => NodeJS.ProcessEnv,
  ) {}

  private madeEnv: NodeJS.ProcessEnv | undefined;
  private get env(): NodeJS.ProcessEnv {
    return (this.madeEnv ??= this.makeEnv());
  }

  /**
   * A file's content as git hashes it, as far as filters go (convert_to_git's first step):
   * through the driver's clean command or process. A failure leaves the content as it is
   * (reported), unless the driver is required: git dies then, also when a required driver has
   * nothing to clean with.
   */
  async clean(name: string, path: string, content: Buffer): Promise<Buffer> {
    const driver = this.drivers.get(name);
    if (driver === undefined) return content;
    const result = await this.run(driver, 'clean', path, content, null, false);
    if (result.status === 'ok') return result.data;
    const message =
      result.status === 'failed'
        ? result.message
        : result.status === 'none'
          ? 'nothing to clean with'
          : 'delayed';
    if (driver.required) {
      throw new PcheckoutError(
        'ERR_FILTER_FAILED',
        `${display(path)}: clean filter '${driver.name}' failed (${message})`,
        { path: display(path) },
      );
    }
    if (result.status !== 'none') this.failures.push({ path, driver: driver.name, message });
    return content;
  }

  /** The command's process; a start that failed is tried again on the next use. */
  private process(cmd: string): Promise<LongRunningFilter> {
    let starting = this.running.get(cmd);
    if (!starting) {
      const started = LongRunningFilter.start(cmd, this.cwd, this.env);
      this.running.set(cmd, started);
      started.catch(() => {
        if (this.running.get(cmd) === started) this.running.delete(cmd);
      });
      starting = started;
    }
    return starting;
  }

  /** The session's process for the command once started; null: none, or its start failed. */
  private async started(cmd: string): Promise<LongRunningFilter | null> {
    const starting = this.running.get(cmd);
    return starting ? starting.catch(() => null) : null;
  }

  private async stopProcess(filter: LongRunningFilter): Promise<void> {
    if ((await this.started(filter.cmd)) === filter) this.running.delete(filter.cmd);
    await filter.stop();
  }

  /**
   * Runs a file's content through its driver (apply_filter): the process when one is
   * configured, else the one-shot command; nothing to run for this direction is 'none'.
   */
  async run(
    driver: FilterDriver,
    direction: Direction,
    path: string,
    content: Buffer,
    meta: SmudgeMeta | null,
    canDelay: boolean,
  ): Promise<FilterOutcome> {
    const cmd = direction === 'smudge' ? driver.smudge : driver.clean;
    if (driver.process === undefined && cmd) {
      return runOneShot(cmd, path, content, this.cwd, this.env);
    }
    if (!driver.process) return { status: 'none' };
    return this.runProcess(driver.process, direction, path, content, meta, canDelay);
  }

  private async runProcess(
    cmd: string,
    direction: Direction,
    path: string,
    content: Buffer,
    meta: SmudgeMeta | null,
    canDelay: boolean,
  ): Promise<FilterOutcome> {
    let filter: LongRunningFilter;
    try {
      filter = await this.process(cmd);
    } catch (err) {
      if (err instanceof PcheckoutError) throw err;
      return {
        status: 'failed',
        message: `initialization for subprocess '${cmd}' failed: ${(err as Error).message}`,
      };
    }
    if (!filter.capabilities.has(direction)) {
      // Dropped after an abort: the file is left unfiltered because the filter gave up.
      if (filter.aborted.has(direction))
        return { status: 'failed', message: `external filter '${cmd}' aborted ${direction}` };
      return { status: 'none' }; // never announced
    }
    const lines = [`command=${direction}`, `pathname=${path}`];
    if (meta?.ref) lines.push(`ref=${meta.ref}`);
    if (meta?.treeish) lines.push(`treeish=${meta.treeish}`);
    if (meta) lines.push(`blob=${meta.blob}`);
    const delay = canDelay && filter.capabilities.has('delay');
    if (delay) lines.push('can-delay=1');
    try {
      const result = await filter.filter(lines, content, delay);
      if (result === 'delayed') {
        this.delaying.add(cmd);
        return { status: 'delayed' };
      }
      return { status: 'ok', data: result };
    } catch (err) {
      return { status: 'failed', message: await this.failed(filter, err, direction) };
    }
  }

  /**
   * git's handle_filter_error: `error` concerns the file only, `abort` drops the direction for
   * the rest of the process's life, anything else stops the process (restarted on next use).
   */
  private async failed(
    filter: LongRunningFilter,
    err: unknown,
    direction: Direction | null,
  ): Promise<string> {
    const status = err instanceof FilterStatusError ? err.status : null;
    if (status === 'error') return `external filter '${filter.cmd}' reported an error`;
    if (status === 'abort' && direction !== null) {
      filter.capabilities.delete(direction); // not asked again while this process runs
      filter.aborted.add(direction);
      return `external filter '${filter.cmd}' aborted`;
    }
    await this.stopProcess(filter);
    return `external filter '${filter.cmd}' failed: ${(err as Error).message}`;
  }

  /**
   * The paths a delaying command has ready now; [] when it has no more. Null when it failed
   * (it is then asked no more).
   */
  async listAvailable(cmd: string): Promise<string[] | null> {
    const filter = await this.started(cmd);
    if (!filter) return null;
    try {
      return await filter.listAvailable();
    } catch (err) {
      await this.failed(filter, err, null);
      return null;
    }
  }

  /** Shuts every process down cleanly (git does it as it exits). */
  async close(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    const filters = await Promise.all(all.map((starting) => starting.catch(() => null)));
    await Promise.all(filters.map((f) => f?.close()));
  }
}
