import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'test/tsconfig.json' },
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
