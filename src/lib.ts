/**
 * The package's one bundle (dist/lib.cjs, scripts/bundle.mjs): the API (`api`, what
 * dist/index.cjs and dist/index.js export), the command line (runCli, what dist/cli.cjs runs)
 * and the orchestrator thread (call/worker.ts, which serves when this file is loaded as a
 * Worker: call/threads.ts starts it so). One copy of the code for all three.
 */
export * as api from './index.js';
export { runCli } from './cli.js';
import './call/worker.js';
