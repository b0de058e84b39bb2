// The conformance vectors against the built package, loaded through its
// `exports` map in both module systems, as a user's code loads it.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as esm from 'payhook';
import { fixtures } from './fixtures.js';
import { canonicalCases, requestCases, signatureCases } from './suite.js';

const cjs = createRequire(import.meta.url)('payhook') as typeof esm;

for (const [format, api] of [
  ['ESM', esm],
  ['CJS', cjs],
] as const) {
  describe(`conformance through the ${format} build`, () => {
    it('loads the built package, not the sources', () => {
      expect(typeof api.buildCanonicalString).toBe('function');
    });
    describe('canonical.json', () => {
      for (const testCase of canonicalCases(api, fixtures)) it(testCase.name, testCase.run);
    });
    describe('signatures.json', () => {
      for (const testCase of signatureCases(api, fixtures)) it(testCase.name, testCase.run);
    });
    describe('requests.json', () => {
      for (const testCase of requestCases(api, fixtures)) it(testCase.name, testCase.run);
    });
  });
}
