// CommonJS launcher for Node: `require`s the packed package by its name, so
// the `require` conditions of the exports map and the .cjs build are what
// runs. The suite and fixtures are plain data and code, loaded as ESM.
'use strict';
const api = require('payhook');
const web = require('payhook/web');

(async () => {
  if (typeof api.buildCanonicalString !== 'function')
    throw new Error('require("payhook") gave no buildCanonicalString');
  const { runAll } = await import('./shared.mjs');
  const { failed, passed } = await runAll(api, web, `node ${process.versions.node} cjs`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
