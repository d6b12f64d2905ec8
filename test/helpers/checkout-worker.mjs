// Worker-thread body for worker-load.test.mjs: load the addon with require() in this thread,
// then run checkout() from here and post the outcome back.
// (`node --test test/` also runs this file on the main thread, where it does nothing.)

import { createRequire } from 'node:module';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

if (!isMainThread && workerData?.pcheckoutTest) {
  const { addonPath, distIndex, repo, opts, loadOnly } = workerData;
  const post = (msg) => parentPort.postMessage(msg);
  try {
    const addon = createRequire(import.meta.url)(addonPath);
    const addonKeys = Object.keys(addon);
    if (loadOnly) {
      post({ ok: true, addonKeys });
    } else {
      const { checkout } = await import(distIndex);
      const progress = [];
      const summary = await checkout(repo, {
        ...opts,
        onProgress: (p) => progress.push(p.done),
      });
      post({ ok: true, addonKeys, summary, progressEvents: progress.length });
    }
  } catch (err) {
    post({
      ok: false,
      error: { name: err?.name, code: err?.code, message: String(err?.message ?? err) },
    });
  }
}
