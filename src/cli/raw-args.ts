/**
 * Command-line arguments that are not valid UTF-8: Node hands them to JavaScript with U+FFFD in
 * place of each such byte, so `pcheckout $'/srv/r\xff'` would name no directory. Their bytes are
 * in /proc/self/cmdline; an argument there that is a directory is opened and given to the rest
 * of the CLI as its descriptor path (`/proc/self/fd/<n>`), which the call turns back into the
 * bytes it names (repo/byte-path.ts). Elsewhere (no /proc, or an argv that is not this process's
 * own) the arguments are left as Node decoded them.
 */
import { openSync, constants, readFileSync, statSync } from 'node:fs';
import { exactUtf8 } from '../repo/byte-path.js';

export function directoryArguments(argv: string[]): string[] {
  if (!argv.some((a) => a.includes('\uFFFD'))) return argv;
  const raw = rawArguments(argv);
  if (raw === null) return argv;
  return argv.map((arg, i) => {
    const bytes = raw[i]!;
    if (exactUtf8(bytes) !== null) return arg;
    try {
      if (!statSync(bytes).isDirectory()) return arg;
      // Open for the whole run: the process's exit closes it.
      return `/proc/self/fd/${openSync(bytes, constants.O_RDONLY | constants.O_DIRECTORY)}`;
    } catch {
      return arg;
    }
  });
}

/** The last argv.length arguments of this process, as bytes, when they are the ones given. */
function rawArguments(argv: string[]): Buffer[] | null {
  let cmdline: Buffer;
  try {
    cmdline = readFileSync('/proc/self/cmdline');
  } catch {
    return null;
  }
  const all: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < cmdline.length; i++) {
    if (cmdline[i] === 0) {
      all.push(cmdline.subarray(from, i));
      from = i + 1;
    }
  }
  if (all.length < argv.length) return null;
  const tail = all.slice(all.length - argv.length);
  return tail.every((b, i) => b.toString('utf8') === argv[i]) ? tail : null;
}
