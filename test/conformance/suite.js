// The conformance suite, runtime-neutral: plain ESM with no imports, so that
// vitest, Node 22/24, Deno, Bun, workerd and a browser page all run the very
// same cases. A launcher loads the fixtures and the package (through its
// exports map, as users do) and hands both in.

/** @typedef {{ name: string, run: () => Promise<void> }} Case */

class Mismatch extends Error {}

function fail(message) {
  throw new Mismatch(message);
}

function show(value) {
  return JSON.stringify(value);
}

async function expectCode(promiseOrFn, code, what) {
  try {
    const result = typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn;
    await result;
  } catch (error) {
    if (error && error.code === code && error.name === 'PayhookError') return;
    fail(
      `${what}: expected a PayhookError with code ${code}, got ${error && error.name} ${error && error.code}: ${error && error.message}`,
    );
  }
  fail(`${what}: expected a PayhookError with code ${code}, but nothing was thrown`);
}

function headersVariants(headers) {
  const variants = [['record', headers]];
  if (typeof globalThis.Headers === 'function') {
    variants.push(['Headers', new globalThis.Headers(headers)]);
  }
  return variants;
}

function bodyVariants(rawBody) {
  const variants = [['text', rawBody]];
  if (rawBody === null) return variants;
  variants.push(['bytes', new TextEncoder().encode(rawBody)]);
  let parsed;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    return variants;
  }
  // A pre-parsed body must be an object (or null) for the pinned shape.
  if (parsed === null || typeof parsed === 'object') variants.push(['parsed', parsed]);
  return variants;
}

function queryVariants(query) {
  const variants = [['map', query]];
  if (query === null) return variants;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) params.set(name, value ?? '');
  variants.push(['URLSearchParams', params]);
  return variants;
}

/**
 * Every canonical-string vector, with headers as a record and as `Headers`,
 * the body as text, bytes and an already parsed value, the query as a map and
 * as `URLSearchParams`.
 * @returns {Case[]}
 */
export function canonicalCases(api, fixtures) {
  const cases = [];
  for (const vector of fixtures.canonical) {
    const { method, path, headers, query, rawBody } = vector.request;
    for (const [headersKind, headersValue] of headersVariants(headers)) {
      for (const [bodyKind, body] of bodyVariants(rawBody)) {
        for (const [queryKind, queryValue] of queryVariants(query)) {
          const label = `canonical ${vector.name} [headers ${headersKind}, body ${bodyKind}, query ${queryKind}]`;
          cases.push({
            name: label,
            run: async () => {
              const request = { method, path, headers: headersValue, query: queryValue, body };
              if (vector.error) {
                await expectCode(() => api.buildCanonicalString(request), vector.error, label);
                return;
              }
              const actual = api.buildCanonicalString(request);
              if (actual !== vector.canonical)
                fail(`${label}:\n  expected ${show(vector.canonical)}\n  actual   ${show(actual)}`);
            },
          });
        }
      }
    }
  }
  return cases;
}

async function asJwk(pem) {
  const body = pem.replace(/-----[^-]+-----|\s+/g, '');
  const der = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, [
    'verify',
  ]);
  return { jwk: await crypto.subtle.exportKey('jwk', key), cryptoKey: key };
}

/**
 * Every signature vector with the key as PEM; the first vectors of each key
 * also with the key as a JSON Web Key and as a `CryptoKey`; and every key case.
 * @returns {Case[]}
 */
export function signatureCases(api, fixtures) {
  const cases = [];
  const seenKeys = new Map();
  for (const vector of fixtures.signatures.signatures) {
    const pem = fixtures.keys[vector.key].publicKeyPem;
    const label = `signature ${vector.name} (${vector.key}, expect ${vector.valid})`;
    cases.push({
      name: label,
      run: async () => {
        const actual = await api.verifySignature(vector.canonical, vector.signature, pem);
        if (actual !== vector.valid) fail(`${label}: verifySignature resolved ${actual}`);
      },
    });
    const seen = seenKeys.get(vector.key) ?? 0;
    if (seen < 3) {
      seenKeys.set(vector.key, seen + 1);
      cases.push({
        name: `${label} [JWK and CryptoKey]`,
        run: async () => {
          const { jwk, cryptoKey } = await asJwk(pem);
          for (const [kind, key] of [
            ['JWK', jwk],
            ['CryptoKey', cryptoKey],
          ]) {
            const actual = await api.verifySignature(vector.canonical, vector.signature, key);
            if (actual !== vector.valid) fail(`${label} with a ${kind}: verifySignature resolved ${actual}`);
          }
        },
      });
    }
  }
  for (const keyCase of fixtures.signatures.keyCases) {
    const pem = fixtures.keys[keyCase.key].publicKeyPem;
    const label = `key ${keyCase.name} (${keyCase.key}, expect ${keyCase.expect})`;
    cases.push({
      name: label,
      run: async () => {
        const canonical = keyCase.canonical ?? 'post\n/hook\nhost:shop.example.kg\n';
        const signature = keyCase.signature ?? 'AAAA';
        if (keyCase.expect === 'valid') {
          const actual = await api.verifySignature(canonical, signature, pem);
          if (actual !== true) fail(`${label}: verifySignature resolved ${actual}`);
          return;
        }
        await expectCode(api.verifySignature(canonical, signature, pem), keyCase.expect, label);
        // A key that is refused is refused in a list too, even beside a good one.
        const good = fixtures.keys['conformance-2048'].publicKeyPem;
        await expectCode(
          api.verifySignature(canonical, signature, [good, pem]),
          keyCase.expect,
          `${label} in a key list`,
        );
        if (keyCase.expect === 'WEAK_KEY') {
          const optedIn = await api.verifySignature(canonical, signature, pem, { allowWeakKeys: true });
          if (optedIn !== false)
            fail(`${label}: with allowWeakKeys a bad signature must resolve false, got ${optedIn}`);
        }
      },
    });
  }
  return cases;
}

function requestVariants(request) {
  const variants = [];
  for (const [headersKind, headers] of headersVariants(request.headers)) {
    for (const [bodyKind, body] of bodyVariants(request.body)) {
      // A pre-parsed non-object (array, string) is not a body the pinned shape takes.
      if (bodyKind === 'parsed' && (body === null || Array.isArray(body))) continue;
      for (const urlKind of ['relative', 'absolute']) {
        const url = urlKind === 'relative' ? request.url : `https://${request.headers.host}${request.url}`;
        variants.push([
          `headers ${headersKind}, body ${bodyKind}, url ${urlKind}`,
          { method: request.method, url, headers, body },
        ]);
      }
    }
  }
  return variants;
}

/**
 * Every whole delivery through `verifyWebhook`, with `now` injected and the
 * default window, in every request shape.
 * @returns {Case[]}
 */
export function requestCases(api, fixtures) {
  const cases = [];
  for (const vector of fixtures.requests) {
    const publicKeys = vector.publicKeys.map((id) => fixtures.keys[id].publicKeyPem);
    for (const [kind, request] of requestVariants(vector.request)) {
      const label = `request ${vector.name} [${kind}]`;
      cases.push({
        name: label,
        run: async () => {
          const result = await api.verifyWebhook(request, { publicKeys, now: vector.now });
          const expect = vector.expect;
          if (result.ok !== expect.ok) {
            fail(`${label}: expected ok=${expect.ok}, got ${show(result.ok ? { ok: true } : result.error)}`);
          }
          if (!expect.ok) {
            if (result.error.code !== expect.code)
              fail(`${label}: expected code ${expect.code}, got ${result.error.code} (${result.error.message})`);
            if (typeof result.error.message !== 'string' || result.error.message === '')
              fail(`${label}: the error has no message`);
            return;
          }
          for (const field of ['id', 'transactionId', 'status', 'operation', 'amount']) {
            if (result.webhook[field] !== expect[field])
              fail(`${label}: webhook.${field} is ${show(result.webhook[field])}, expected ${show(expect[field])}`);
          }
        },
      });
    }
  }
  return cases;
}

/** All cases of the suite. */
export function allCases(api, fixtures) {
  return [...canonicalCases(api, fixtures), ...signatureCases(api, fixtures), ...requestCases(api, fixtures)];
}

/**
 * Runs cases outside a test framework and reports like every launcher does:
 * a summary line `N passed, N failed` that CI reads.
 */
export async function runCases(cases, { label = 'conformance', log = console.log } = {}) {
  let passed = 0;
  const failures = [];
  for (const testCase of cases) {
    try {
      await testCase.run();
      passed++;
    } catch (error) {
      failures.push({ name: testCase.name, message: String((error && error.stack) || error) });
    }
  }
  for (const failure of failures.slice(0, 20)) log(`FAIL ${failure.name}\n${failure.message}`);
  log(`${label}: ${passed} passed, ${failures.length} failed`);
  return { passed, failed: failures.length, failures };
}
