/**
 * A checkout that stops after it began to change the worktree — removals done, some files
 * written, the index and HEAD not yet — leaves the worktree between two trees. Its error says
 * what failed, how far it got, and the command that completes it.
 */
import { detailsOf, PcheckoutError, withWritten, type WrittenSoFar } from './errors.js';
import type { Mode } from './plan/plan.js';

export interface PartWayContext {
  mode: Mode | 'materialize';
  /** The revision as the caller named it (undefined: HEAD). */
  ref: string | undefined;
  paths: readonly string[] | undefined;
}

/** How to finish what was begun, in pcheckout's words and git's. */
export function finishHint({ mode, ref, paths }: PartWayContext): string {
  const quote = (s: string): string =>
    /^[\w@^~./:+-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
  const rev = ref === undefined ? '' : ` ${quote(ref)}`;
  const spec = paths && paths.length > 0 ? ` -- ${paths.map(quote).join(' ')}` : '';
  switch (mode) {
    case 'materialize':
      return 'Running the same materialize again completes it.';
    case 'restore':
      return `\`pcheckout --restore${spec}\` (or \`git checkout-index -a -f\`) completes it.`;
    case 'paths':
      return `\`pcheckout${rev}${spec}\` again (or \`git checkout${rev}${spec}\`) completes it.`;
    default:
      return (
        `\`pcheckout --force${rev}\` (or \`git checkout -f${rev}\`) completes it; ` +
        'it discards local changes to tracked files.'
      );
  }
}

const STAGES: Record<WrittenSoFar['stage'], string> = {
  remove: 'removing old entries',
  directories: 'making directories',
  files: 'writing files',
  links: 'writing symlinks',
  collisions: 'rewriting files it could not replace in place',
};

function describe(w: WrittenSoFar): string {
  const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
  return (
    `the checkout stopped part-way, ${STAGES[w.stage]}: ${plural(w.removed, 'old entry', 'old entries')} ` +
    `removed, ${w.files} of ${w.total} files written; the index and HEAD are unchanged`
  );
}

/** The error a part-way stop throws: git's own message first, then how far, then how to finish. */
export function partWay(
  err: unknown,
  written: WrittenSoFar | undefined,
  ctx: PartWayContext,
): unknown {
  if (!(err instanceof PcheckoutError)) return err;
  const w = written ?? err.written;
  const far =
    w === undefined
      ? 'the checkout stopped after it changed the worktree; the index and HEAD are unchanged'
      : describe(w);
  const message = `${err.message}\n${far}.\n${finishHint(ctx)}`;
  return w === undefined
    ? new PcheckoutError(err.code, message, { ...detailsOf(err), cause: err.cause ?? err })
    : withWritten(err, w, message);
}
