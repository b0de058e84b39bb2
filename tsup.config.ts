import { defineConfig } from 'tsup';

// One entry per public import path. Shared code goes into chunks, so the
// error class and the key cache exist once even when several entries load.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
  },
  format: ['esm', 'cjs'],
  target: 'es2022',
  platform: 'neutral',
  dts: true,
  splitting: true,
  treeshake: true,
  sourcemap: false,
  clean: true,
  minify: false,
  outDir: 'dist',
});
