// Browser launcher: the page (served by scripts/test-runtimes.mjs over
// loopback) maps `payhook` and `payhook/web` to the packed package's ESM
// files with an import map generated from its exports map; this module runs
// every case and leaves the tally on `globalThis.__payhookResult`.
import * as api from 'payhook';
import * as web from 'payhook/web';
import { runAll } from './shared.mjs';

const label = `chromium ${/Chrome\/([\d.]+)/.exec(navigator.userAgent)?.[1] ?? ''}`.trim();
try {
  const { passed, failed } = await runAll(api, web, label);
  globalThis.__payhookResult = { passed, failed };
} catch (error) {
  console.log(`launcher crashed: ${(error && error.stack) || error}`);
  globalThis.__payhookResult = { passed: 0, failed: 1 };
}
