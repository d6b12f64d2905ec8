/**
 * A call on the calling thread itself: for the CLI, whose process has no event loop to keep
 * serving (an orchestrator thread would only add its start, ~30 ms, to a one-shot process).
 */
import { Resources } from '../resources.js';
import { Control, type Progress } from '../run/control.js';
import { noClaim, withJob, type JobRequest } from '../run/job.js';
import { run } from '../run/run.js';
import type { CheckoutSummary } from '../run/summary.js';

export async function runHere(
  request: JobRequest,
  onProgress: ((p: Progress) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<CheckoutSummary> {
  const control = new Control(signal, null, onProgress);
  const resources = new Resources();
  try {
    control.check();
    return await withJob(request, noClaim, (job) => run(job, resources, control));
  } finally {
    resources.idle();
    resources.close('worthwhile');
  }
}
