import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { derToPem, pemToSpki, pkcs1ToSpki } from '../../src/lib/pem.js';
import { codeOf } from '../helpers/codes.js';

const keys = JSON.parse(readFileSync(new URL('../fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string; privateKeyPem?: string }
>;
const spkiPem = keys['conformance-2048']!.publicKeyPem;
const pkcs1Pem = keys['conformance-2048.pkcs1']!.publicKeyPem;
const spkiDer = new Uint8Array(createPublicKey(spkiPem).export({ type: 'spki', format: 'der' }));

describe('pemToSpki', () => {
  it('returns the DER of an SPKI PEM unchanged', () => {
    expect(pemToSpki(spkiPem)).toEqual(spkiDer);
  });

  it('wraps a PKCS#1 PEM into the very SPKI node:crypto writes for that key', () => {
    expect(pkcs1Pem).toContain('BEGIN RSA PUBLIC KEY');
    expect(pemToSpki(pkcs1Pem)).toEqual(spkiDer);
  });

  it('wraps PKCS#1 keys of other sizes (long-form DER lengths) correctly', () => {
    for (const name of ['weak-1024', 'stranger-2048', 'ref-test']) {
      const publicKey = createPublicKey(keys[name]!.publicKeyPem);
      const pkcs1 = publicKey.export({ type: 'pkcs1', format: 'pem' }) as string;
      const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
      expect(pemToSpki(pkcs1)).toEqual(spki);
    }
  });

  it('accepts CRLF line ends, surrounding text and literal "\\n" escapes (a PEM pasted into an env var)', () => {
    expect(pemToSpki(`prefix\r\n${spkiPem.replace(/\n/g, '\r\n')}suffix`)).toEqual(spkiDer);
    expect(pemToSpki(spkiPem.replace(/\n/g, '\\n'))).toEqual(spkiDer);
  });

  it.each([
    ['garbage text', 'not a key at all'],
    ['the empty string', ''],
    ['a private key PEM', keys['conformance-2048']!.privateKeyPem!],
    ['a certificate label', spkiPem.replace(/PUBLIC KEY/g, 'CERTIFICATE')],
    ['mismatched labels', spkiPem.replace('END PUBLIC KEY', 'END RSA PUBLIC KEY')],
    ['a body that is not base64', '-----BEGIN PUBLIC KEY-----\nMIIB*IjAN\n-----END PUBLIC KEY-----'],
    ['an empty body', '-----BEGIN PUBLIC KEY-----\n\n-----END PUBLIC KEY-----'],
  ])('refuses %s with INVALID_KEY', (_label, pem) => {
    expect(codeOf(() => pemToSpki(pem))).toBe('INVALID_KEY');
  });

  // Only the first block was read: the second key of one variable was dropped without a word.
  it.each([
    ['two public keys (production and beta in one variable)', spkiPem + keys['stranger-2048']!.publicKeyPem],
    ['a public key and a certificate', `${spkiPem}${spkiPem.replace(/PUBLIC KEY/g, 'CERTIFICATE')}`],
    ['a private key before its public key', keys['conformance-2048']!.privateKeyPem! + spkiPem],
    ['a public key before a private key', spkiPem + keys['conformance-2048']!.privateKeyPem!],
  ])('refuses a text holding %s, naming why', (_label, pem) => {
    expect(codeOf(() => pemToSpki(pem))).toBe('INVALID_KEY');
    expect(() => pemToSpki(pem)).toThrow(/not one PEM public key/);
  });
});

describe('pemToSpki on text that is no PEM at all', () => {
  // publicKeys: 'production' passed type checks (a string) and was answered as any bad PEM.
  it.each([
    ['production', 'production'],
    ['beta', 'beta'],
    [' beta\n', 'beta'],
    ['Production', 'production'],
    ['"production"', 'production'],
    ["'beta'", 'beta'],
  ])('names the environment option for %j', (text, name) => {
    expect(codeOf(() => pemToSpki(text))).toBe('INVALID_KEY');
    expect(() => pemToSpki(text)).toThrow(`: '${name}' names an environment, use { environment: '${name}' }.`);
  });

  it("names a JWK given as text, and a key's base64 given without its PEM lines", () => {
    const base64 = spkiPem.replace(/-----[^-]+-----/g, '');
    const hint = /: base64 without PEM lines\? pass the public key PEM as issued\.$/;
    expect(() => pemToSpki(base64)).toThrow(hint);
    expect(() => pemToSpki(base64.replace(/\s/g, ''))).toThrow(hint);
    // Line breaks as literal \n, as an environment variable may hold them.
    expect(() => pemToSpki(base64.trim().replace(/\n/g, '\\n'))).toThrow(hint);
    expect(() => pemToSpki(JSON.stringify({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }))).toThrow(
      /: JSON text\? pass one parsed JWK\.$/,
    );
  });

  // Many BEGIN lines and no END: the lazy match from each of them made the check quadratic (400 KB took 2.4 s).
  it('refuses a text of many BEGIN lines in linear time', () => {
    const text = '-----BEGIN PUBLIC KEY-----'.repeat(40_000);
    const started = performance.now();
    expect(codeOf(() => pemToSpki(text))).toBe('INVALID_KEY');
    expect(performance.now() - started).toBeLessThan(2_000); // a hang guard, not a speed figure: about 1 ms now
  });

  it.each(['./keys/production.pem', 'PAYMENT_PUBLIC_KEY', ''])(
    'says a path or a name is not the key for %j',
    (text) => {
      expect(() => pemToSpki(text)).toThrow(
        /: no -----BEGIN line \(a file path or a variable name, not the key itself\?\)\.$/,
      );
    },
  );

  it('adds no hint to a text that holds a PEM block', () => {
    expect(() => pemToSpki(spkiPem + spkiPem)).toThrow(
      /^The key is not one PEM public key \(BEGIN PUBLIC KEY or BEGIN RSA PUBLIC KEY\)\.$/,
    );
  });
});

describe('pkcs1ToSpki and derToPem', () => {
  it('derToPem writes 64-character lines that pemToSpki reads back', () => {
    const pem = derToPem(spkiDer, 'PUBLIC KEY');
    const lines = pem.trim().split('\n');
    expect(lines[0]).toBe('-----BEGIN PUBLIC KEY-----');
    expect(lines.at(-1)).toBe('-----END PUBLIC KEY-----');
    for (const line of lines.slice(1, -2)) expect(line).toHaveLength(64);
    expect(pemToSpki(pem)).toEqual(spkiDer);
    expect(createPublicKey(pem).export({ type: 'spki', format: 'pem' })).toBe(
      createPublicKey(spkiPem).export({ type: 'spki', format: 'pem' }),
    );
  });

  it('pkcs1ToSpki uses a short-form length for a tiny input', () => {
    const wrapped = pkcs1ToSpki(new Uint8Array([0x30, 0x00]));
    // SEQUENCE(len) { AlgorithmIdentifier(15 bytes), BIT STRING(3 bytes: 0x00 + input) }
    expect(wrapped[0]).toBe(0x30);
    expect(wrapped[1]).toBe(15 + 2 + 3);
    expect(wrapped.length).toBe(2 + 15 + 2 + 3);
    expect([...wrapped.slice(-5)]).toEqual([0x03, 0x03, 0x00, 0x30, 0x00]);
  });
});
