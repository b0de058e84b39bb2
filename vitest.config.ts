import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that run the guides' code blocks as written (`*.docs.test.ts`,
    // named by a `doc-test: run-by` marker) belong to `npm run test:docs`,
    // which sets PAYHOOK_DOC_TESTS after type-checking the blocks.
    exclude: [...configDefaults.exclude, ...(process.env.PAYHOOK_DOC_TESTS === '1' ? [] : ['test/**/*.docs.test.ts'])],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'test/tsconfig.json' },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // What a test logs (the handler's default log lines, servers' chatter) is
    // shown only for a test that fails, where it helps; passing runs stay quiet.
    silent: 'passed-only',
    // Vitest's default is one worker per core minus one: a single worker on two
    // cores. Many files here wait on servers they start (Redis, PostgreSQL,
    // HTTP), so two workers keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
