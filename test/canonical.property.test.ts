import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCanonicalString, type CanonicalRequest } from '../src/canonical.js';
import { isPayhookError } from '../src/errors.js';
import { warmBinaryStrings } from './helpers/fast-check.js';

beforeAll(warmBinaryStrings);

// Properties of the canonical string (CONTRACT §1). The body oracle is the
// contract's rule written out again independently, literally: top-level keys
// sorted with localeCompare(…, 'en-US'), assigned into a fresh `{}`, written
// with JSON.stringify. A top-level "__proto__" key is the one place where the
// literal reading and payhook differ on purpose (assigning it into `{}` drops
// it, so it would not be signed; payhook keeps it as an entry, see
// test/canonical.test.ts and src/lib/json-body.ts), so the oracle's inputs
// leave that key out.

function contractBodyLine(parsed: Record<string, unknown>): string {
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(parsed).sort((a, b) => a.localeCompare(b, 'en-US'))) sorted[key] = parsed[key];
  return JSON.stringify(sorted);
}

const key = fc
  .oneof(
    fc.string({ maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.constantFrom(
      '9',
      '10',
      '01',
      '-1',
      '1.5',
      '4294967295',
      '4294967294',
      'a',
      'A',
      'B',
      'b',
      '_',
      'é',
      'e',
      'É',
      'ß',
      'ss',
      ' ',
      'amount',
      'Amount',
    ),
    fc.nat({ max: 5000 }).map(String),
  )
  .filter((name) => name !== '__proto__');
const jsonValue = fc.jsonValue({ maxDepth: 3 });
const jsonObject = fc.dictionary(key, jsonValue, { maxKeys: 12 });

/** JSON text for `entries` in exactly the given order (duplicates allowed). */
function objectText(entries: ReadonlyArray<readonly [string, unknown]>, space = ''): string {
  return `{${entries.map(([name, value]) => `${space}${JSON.stringify(name)}${space}:${space}${JSON.stringify(value, null, space.replace(/[^ \t\n\r]/g, '') || undefined)}${space}`).join(',')}}`;
}

const request = (
  body: CanonicalRequest['body'],
  headers: CanonicalRequest['headers'] = { host: 'shop.example.kg' },
): CanonicalRequest => ({
  method: 'POST',
  path: '/hook',
  headers,
  body,
});
const bodyLine = (body: CanonicalRequest['body']): string => buildCanonicalString(request(body)).split('\n').at(-1)!;

describe('the body line (property)', () => {
  it('is the contract rule applied to the parsed value', () => {
    fc.assert(
      fc.property(jsonObject, (object) => {
        expect(bodyLine(JSON.stringify(object))).toBe(
          contractBodyLine(JSON.parse(JSON.stringify(object)) as Record<string, unknown>),
        );
      }),
      { numRuns: 1000 },
    );
  });

  // The keys real deliveries carry are printable ASCII: their order through every kind of difference (a collation
  // weight, letter case only, a prefix), on long keys too, and every pair of characters in both wire orders. The
  // oracle uses this engine's collator too, so this pins the sort to the contract rule; that the engine's order is
  // Node's is checked in every runtime by test/runtimes/shared.mjs.
  it('orders keys of printable ASCII only exactly as the en-US collator does', () => {
    const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
    const near = fc.constantFrom(...'aAbBzZ09 _-.~$!'.split(''));
    const asciiKey = fc.oneof(
      fc.string({ unit: fc.constantFrom(...printable), maxLength: 10 }),
      fc.string({ unit: near, maxLength: 4 }),
      fc.string({ unit: near, minLength: 30, maxLength: 40 }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(asciiKey, { maxLength: 40 }), (keys) => {
        const object = Object.fromEntries(keys.filter((name) => name !== '__proto__').map((name, i) => [name, i]));
        expect(bodyLine(JSON.stringify(object))).toBe(contractBodyLine(object));
      }),
      { numRuns: 3000 },
    );
    // Every pair of printable characters, alone and after a shared prefix.
    const pairs = printable.flatMap((a) =>
      printable.flatMap((b) =>
        a < b
          ? [
              [a, b],
              [`x${a}`, `x${b}`],
            ]
          : [],
      ),
    );
    for (const [a, b] of pairs) {
      for (const object of [
        { [a!]: 0, [b!]: 1 },
        { [b!]: 1, [a!]: 0 },
      ]) {
        expect(bodyLine(JSON.stringify(object))).toBe(contractBodyLine(object));
      }
    }
  });

  it('does not depend on the order of top-level keys on the wire (keys that collate apart)', () => {
    // Keys that en-US collation calls equal ("" and "\u0000", "e\u0301" and
    // "é") keep their wire order: the sort is stable, as the service's is.
    // test/canonical.test.ts pins that case; here the keys collate apart.
    const collator = new Intl.Collator('en-US');
    const untied = jsonObject.filter((object) => {
      const keys = Object.keys(object).sort(collator.compare);
      return keys.every((name, i) => i === 0 || collator.compare(keys[i - 1]!, name) !== 0);
    });
    fc.assert(
      fc.property(
        untied.chain((object) =>
          fc.tuple(
            fc.constant(object),
            fc.shuffledSubarray(Object.entries(object), { minLength: Object.keys(object).length }),
          ),
        ),
        ([object, shuffled]) => {
          expect(bodyLine(objectText(shuffled))).toBe(bodyLine(objectText(Object.entries(object))));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('does not depend on JSON whitespace', () => {
    const space = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 6 });
    fc.assert(
      fc.property(jsonObject, space, space, space, (object, inner, before, after) => {
        const compact = JSON.stringify(object);
        const spaced = before + JSON.stringify(object, null, inner || undefined) + after;
        expect(bodyLine(spaced)).toBe(bodyLine(compact));
        expect(bodyLine(objectText(Object.entries(object), inner))).toBe(bodyLine(compact));
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on the body kind: text, bytes or parsed value', () => {
    fc.assert(
      fc.property(jsonObject, (object) => {
        const text = JSON.stringify(object);
        const expected = bodyLine(text);
        expect(bodyLine(new TextEncoder().encode(text))).toBe(expected);
        expect(bodyLine(JSON.parse(text) as object)).toBe(expected);
        expect(bodyLine(object)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('with a top-level "__proto__" key: the rule with the entries defined, not assigned (payhook keeps the member)', () => {
    fc.assert(
      fc.property(jsonObject, jsonValue, (object, protoValue) => {
        const text = objectText([...Object.entries(object), ['__proto__', protoValue]]);
        const parsed = JSON.parse(text) as Record<string, unknown>;
        const sorted = Object.keys(parsed).sort((a, b) => a.localeCompare(b, 'en-US'));
        // Object.fromEntries defines own properties, so "__proto__" stays an entry.
        const expected = JSON.stringify(Object.fromEntries(sorted.map((name) => [name, parsed[name]])));
        expect(bodyLine(text)).toBe(expected);
        expect(bodyLine(text)).toContain('"__proto__":');
      }),
      { numRuns: 300 },
    );
  });

  it('lets the last duplicate key win, as JSON.parse does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', '1'), jsonValue), { minLength: 1, maxLength: 8 }),
        (entries) => {
          const text = objectText(entries);
          expect(bodyLine(text)).toBe(contractBodyLine(JSON.parse(text) as Record<string, unknown>));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the body line over a stream of deliveries (property)', () => {
  // Each delivery's body line must depend on that body alone, whatever came
  // before it. Streams here repeat key lists, send the same keys in other
  // wire orders (keys that collate equal keep theirs), and hold many
  // distinct lists, interleaved.
  const tied = [
    ['', '\u0000'],
    ['\u0000', ''],
    ['é', 'e\u0301', 'a'],
    ['e\u0301', 'é', 'a'],
  ];
  const shapes = fc
    .array(fc.uniqueArray(key, { maxLength: 10 }), { minLength: 1, maxLength: 90 })
    .map((lists) => [...lists, ...tied]);
  const stream = shapes.chain((lists) =>
    fc.tuple(
      fc.constant(lists),
      fc.array(fc.tuple(fc.nat({ max: lists.length - 1 }), fc.array(jsonValue, { minLength: 10, maxLength: 10 })), {
        minLength: 1,
        maxLength: 300,
      }),
    ),
  );

  it('is the contract rule for every body, whatever came before it', () => {
    fc.assert(
      fc.property(stream, ([lists, deliveries]) => {
        for (const [pick, values] of deliveries) {
          const text = objectText(lists[pick]!.map((name, i) => [name, values[i]] as const));
          expect(bodyLine(text)).toBe(contractBodyLine(JSON.parse(text) as Record<string, unknown>));
        }
      }),
      { numRuns: 150 },
    );
  });
});

// Header names: ASCII tokens (what HTTP allows), unique once lower-cased.
const tokenChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_.!#$%&'*+^`|~".split(''));
const apiName = fc.string({ unit: tokenChar, minLength: 1, maxLength: 10 }).map((rest) => `x-api-${rest}`);
const otherName = fc
  .string({ unit: tokenChar, minLength: 1, maxLength: 10 })
  .filter((name) => !name.startsWith('x-api-') && name !== 'host');
// Values a WHATWG Headers keeps unchanged: visible ASCII and inner spaces.
const headerValue = fc
  .string({ unit: fc.constantFrom(...'abcXYZ019 -_:;,/=+%'.split('')), maxLength: 12 })
  .map((value) => value.trim());

function flipCase(name: string, flips: readonly boolean[]): string {
  return [...name].map((char, i) => (flips[i % flips.length] ? char.toUpperCase() : char)).join('');
}

describe('the header line (property)', () => {
  const headerSet = fc.uniqueArray(fc.tuple(fc.oneof(apiName, otherName), headerValue), {
    selector: ([name]) => name,
    maxLength: 8,
  });

  it('does not depend on the letter case of header names', () => {
    fc.assert(
      fc.property(
        headerSet,
        headerValue,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
        (headers, host, flips) => {
          const lower = Object.fromEntries([['host', host], ...headers]);
          const mixed = Object.fromEntries([
            [flipCase('host', flips), host],
            ...headers.map(([name, value]) => [flipCase(name, flips), value]),
          ]);
          expect(buildCanonicalString(request('{}', mixed))).toBe(buildCanonicalString(request('{}', lower)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is the same from a WHATWG Headers and from a record, and lists exactly the x-api-* headers sorted', () => {
    fc.assert(
      fc.property(headerSet, headerValue, (headers, host) => {
        const record = Object.fromEntries([['Host', host], ...headers]);
        const line = buildCanonicalString(request(null, record)).split('\n')[2];
        expect(buildCanonicalString(request(null, new Headers(record))).split('\n')[2]).toBe(line);
        const api = headers
          .filter(([name]) => name.startsWith('x-api-'))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        expect(line).toBe([`host:${host}`, ...api.map(([name, value]) => `${name}:${value}`)].join('&'));
      }),
      { numRuns: 500 },
    );
  });
});

// Strings built to break percent decoding and UTF-16: '%' with and without
// hex digits, lone surrogates, reserved characters.
const nasty = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '%',
      '%2',
      '%2F',
      '%zz',
      '%C3',
      '%C3%A9',
      '%ED%A0%80',
      '\uD800',
      '\uDC00',
      '\uD83D\uDCB3',
      'é',
      '/',
      '?',
      '#',
      '=',
      '&',
      '+',
      ' ',
      'a',
      '0',
      '\n',
      '\u0000',
    ),
    fc.string({ unit: 'binary', maxLength: 2 }),
  ),
  maxLength: 12,
});
const weirdName = fc.oneof(
  nasty,
  fc.constantFrom(
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'forEach',
    'get',
    'host',
    'Host',
    'x-api-',
    'X-API-x',
    '',
  ),
);
const anything = fc.anything({
  maxDepth: 3,
  maxKeys: 5,
  withBigInt: true,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withDate: true,
  withNullPrototype: true,
  withSparseArray: true,
  withObjectString: true,
  key: weirdName,
});

function buildOrCode(input: unknown): string {
  try {
    return `ok:${buildCanonicalString(input as CanonicalRequest)}`;
  } catch (error) {
    if (isPayhookError(error)) return `code:${error.code}`;
    throw error;
  }
}

describe('arbitrary input (property)', () => {
  it('gives a string or a PayhookError, never another exception', () => {
    const headers = fc.oneof(
      anything,
      fc.dictionary(weirdName, fc.oneof(nasty, fc.array(nasty, { maxLength: 3 }), anything), { maxKeys: 6 }),
      fc.dictionary(weirdName, nasty, { maxKeys: 6 }).map((record) => ({ host: 'h', ...record })),
    );
    const query = fc.oneof(
      anything,
      nasty,
      fc.dictionary(weirdName, fc.oneof(nasty, fc.constant(null), anything), { maxKeys: 6 }),
    );
    const body = fc.oneof(
      anything,
      nasty,
      fc.json({ maxDepth: 3 }),
      fc.dictionary(weirdName, anything, { maxKeys: 6 }),
    );
    fc.assert(
      fc.property(
        fc.oneof(nasty, anything),
        fc.oneof(nasty, anything),
        headers,
        query,
        body,
        (method, path, h, q, b) => {
          const result = buildOrCode({ method, path, headers: h, query: q, body: b });
          expect(typeof result).toBe('string');
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('well-formed requests with nasty paths and queries give a string or a path/query error', () => {
    fc.assert(
      fc.property(nasty, fc.oneof(nasty, fc.dictionary(weirdName, fc.option(nasty), { maxKeys: 6 })), (path, query) => {
        const result = buildOrCode({ method: 'POST', path, headers: { host: 'h' }, query, body: '{}' });
        expect(result.startsWith('ok:') || result === 'code:MALFORMED_PATH' || result === 'code:MALFORMED_QUERY').toBe(
          true,
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('any request shape works as a whole object or as an arbitrary value', () => {
    fc.assert(
      fc.property(anything, (value) => {
        expect(typeof buildOrCode(value)).toBe('string');
      }),
      { numRuns: 1000 },
    );
  });
});
