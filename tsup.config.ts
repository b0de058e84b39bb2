import { defineConfig } from 'tsup';

// One entry per public import path. Shared code goes into chunks, so the
// error class and the key cache exist once even when several entries load.
export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      web: 'src/web/index.ts',
      node: 'src/node/index.ts',
      redis: 'src/redis/index.ts',
      postgres: 'src/postgres/index.ts',
      cloudflare: 'src/cloudflare/index.ts',
      sqlite: 'src/sqlite/index.ts',
      testing: 'src/testing/index.ts',
      explain: 'src/explain/index.ts',
    },
    format: ['esm', 'cjs'],
    target: 'es2022',
    platform: 'neutral',
    dts: true,
    splitting: true,
    treeshake: true,
    sourcemap: false,
    clean: false, // `npm run build` empties dist first; both configs write into it
    outDir: 'dist',
    // Keep `node:crypto` (payhook/node) as written: a bundler may resolve a bare `crypto` to an npm package.
    removeNodeProtocol: false,
    external: [/^node:/],
  },
  {
    // The command-line tool: Node only, ESM only, never imported by users.
    entry: { cli: 'src/cli/index.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: false,
    splitting: false,
    clean: false,
    outDir: 'dist',
    removeNodeProtocol: false,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
