// Bundles a Worker module the way wrangler resolves packages for workerd
// (the `workerd`/`worker`/`browser` export conditions, ESM, no Node APIs),
// for the runtime matrix and the Cloudflare example alike.
import { build } from 'esbuild';

/** @param {string} entry the Worker's entry file @returns {Promise<string>} the bundled script */
export async function bundleForWorkerd(entry) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}
