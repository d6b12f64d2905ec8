/** What the CLI prints of a checkout: the progress bar on a terminal, and the summary line. */
import type { CheckoutSummary, Progress } from '../checkout.js';

export class ProgressBar {
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

export function describe(s: CheckoutSummary): string {
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
    (s.filters.files > 0 ? ` (${s.filters.files} through external filters)` : '') +
    (s.store
      ? ` (store: ${s.store.imported} imported${s.store.method ? ` by ${s.store.method}` : ''}, ${s.store.inserted} added${s.store.repaired ? `, ${s.store.repaired} damaged entries rewritten` : ''})`
      : '');
  const mb = (s.bytes / 1048576).toFixed(1);
  const changes =
    s.mode === 'fresh' ? '' : ` (${s.created} created, ${s.updated} updated, ${s.deleted} removed)`;
  const lines = [
    `${head}: ${s.files} files, ${s.symlinks} symlinks, ${s.gitlinks} gitlinks (${mb} MiB) written ${how} in ${(s.timings.total / 1000).toFixed(2)} s${changes}`,
  ];
  if (s.store?.error)
    lines.push(`warning: store: ${s.store.failed} file(s) not kept or taken: ${s.store.error}`);
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
