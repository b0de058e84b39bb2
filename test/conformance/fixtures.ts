import { readFileSync } from 'node:fs';

function load(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8'));
}

/** The conformance vectors, copied byte for byte from the service's set. */
export const fixtures = {
  canonical: load('canonical.json'),
  signatures: load('signatures.json'),
  requests: load('requests.json'),
  keys: load('keys.json'),
} as Fixtures;

export interface KeyFixture {
  publicKeyPem: string;
  privateKeyPem?: string;
}
export interface Fixtures {
  canonical: Array<{
    name: string;
    request: {
      method: string;
      path: string;
      headers: Record<string, string>;
      query: Record<string, string | null> | null;
      rawBody: string | null;
    };
    canonical?: string;
    error?: string;
  }>;
  signatures: {
    signatures: Array<{ name: string; canonical: string; signature: string; key: string; valid: boolean }>;
    keyCases: Array<{ name: string; key: string; expect: string; canonical?: string; signature?: string }>;
  };
  requests: Array<{
    name: string;
    request: { method: string; url: string; headers: Record<string, string>; body: string };
    now: number;
    publicKeys: string[];
    expect: Record<string, unknown>;
  }>;
  keys: Record<string, KeyFixture>;
}
