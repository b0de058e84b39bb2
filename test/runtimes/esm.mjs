// ESM launcher for Node, Deno and Bun: loads the packed package by its name
// (test/runtimes/node_modules/payhook, resolved through its exports map) and
// runs every case. Exits non-zero when any case fails.
import * as api from 'payhook';
import * as web from 'payhook/web';
import { runAll } from './shared.mjs';

const label = globalThis.Deno ? 'deno' : globalThis.Bun ? 'bun' : `node ${globalThis.process.versions.node} esm`;
const { failed, passed } = await runAll(api, web, label);
const code = failed === 0 && passed > 0 ? 0 : 1;
if (globalThis.Deno) globalThis.Deno.exit(code);
else globalThis.process.exit(code);
