import { afterEach, describe, expect, it, vi } from 'vitest';
import { newClaimToken } from '../../src/dedup/token.js';

describe('newClaimToken', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('is a random UUID where crypto.randomUUID exists, never the same twice', () => {
    const tokens = new Set(Array.from({ length: 1000 }, newClaimToken));
    expect(tokens.size).toBe(1000);
    for (const token of tokens)
      expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('falls back to 128 random bits in hex where crypto.randomUUID is missing', () => {
    const real = globalThis.crypto;
    const getRandomValues = vi.fn((array: Uint8Array): Uint8Array => real.getRandomValues(array));
    vi.stubGlobal('crypto', { getRandomValues });
    const tokens = new Set(Array.from({ length: 1000 }, newClaimToken));
    expect(getRandomValues).toHaveBeenCalledTimes(1000);
    expect(tokens.size).toBe(1000);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{32}$/);
  });
});
