/**
 * Test-only crash injection (never set these outside tests): PCHECKOUT_TEST_KILL_AT=<k> makes
 * the process send itself a signal (PCHECKOUT_TEST_KILL_SIGNAL, default SIGKILL) at the k-th
 * kill point a checkout passes on the main thread — once its locks are taken, after each phase,
 * after each chunk of files written, between the index and HEAD. A test stops a checkout at
 * deterministic moments this way and checks what a re-run finds (test/slow/kill-loop.test.mjs).
 */
const at = Number(process.env['PCHECKOUT_TEST_KILL_AT'] ?? 0);
const signal = process.env['PCHECKOUT_TEST_KILL_SIGNAL'] || 'SIGKILL';
let reached = 0;

export function killPoint(): void {
  if (at > 0 && ++reached === at) process.kill(process.pid, signal);
}
