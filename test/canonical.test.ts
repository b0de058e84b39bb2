import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { buildCanonicalString, type CanonicalRequest } from '../src/canonical.js';
import { codeOf } from './helpers/codes.js';

const base: CanonicalRequest = {
  method: 'POST',
  path: '/webhooks/payments',
  headers: { Host: 'shop.example.kg', 'x-api-timestamp': '1763712000000' },
  body: '{"status":"SUCCEEDED","amount":100}',
};
const build = (overrides: Partial<CanonicalRequest>): string => buildCanonicalString({ ...base, ...overrides });

describe('buildCanonicalString: the layout', () => {
  it('writes method, path, headers and body, one per line, without a trailing newline', () => {
    expect(buildCanonicalString(base)).toBe(
      'post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:1763712000000\n{"amount":100,"status":"SUCCEEDED"}',
    );
  });

  it('adds the query line only when the query is non-empty', () => {
    expect(build({ query: { b: '2', a: '1' } }).split('\n')).toEqual([
      'post',
      '/webhooks/payments',
      'host:shop.example.kg&x-api-timestamp:1763712000000',
      'a=1&b=2',
      '{"amount":100,"status":"SUCCEEDED"}',
    ]);
    for (const query of [null, undefined, {}, '', '?', new URLSearchParams()]) {
      expect(build({ query }).split('\n')).toHaveLength(4);
    }
  });

  it('ends with an empty line when there is no body (absent, empty text, empty bytes, JSON null)', () => {
    for (const body of [undefined, null, '', new Uint8Array(), 'null', ' null ']) {
      expect(build({ body })).toBe('post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:1763712000000\n');
    }
  });
});

describe('line 1: the method', () => {
  it('is lower-cased', () => {
    expect(build({ method: 'PoSt' }).split('\n')[0]).toBe('post');
  });

  it('must be a string: INVALID_ARGUMENT', () => {
    expect(codeOf(() => build({ method: undefined as unknown as string }))).toBe('INVALID_ARGUMENT');
  });
});

describe('line 2: the path', () => {
  it('is decoded as decodeURI decodes it, reserved escapes kept', () => {
    expect(build({ path: '/%D0%BF%D0%BB%D0%B0%D1%82%D0%B5%D0%B6' }).split('\n')[1]).toBe('/платеж');
    expect(build({ path: '/a%2Fb%3F%23%26%3D%2B%24%2C%3B%3A%40%20c' }).split('\n')[1]).toBe(
      '/a%2Fb%3F%23%26%3D%2B%24%2C%3B%3A%40 c',
    );
  });

  it('is kept as given when it holds no escape', () => {
    expect(build({ path: '/платеж' }).split('\n')[1]).toBe('/платеж');
  });

  it('is an empty line when absent', () => {
    expect(build({ path: '' }).split('\n')[1]).toBe('');
    expect(build({ path: undefined as unknown as string }).split('\n')[1]).toBe('');
    expect(build({ path: null as unknown as string }).split('\n')[1]).toBe('');
  });

  it.each([
    ['a truncated escape', '/a%2'],
    ['a non-hex escape', '/a%zz'],
    ['a lone percent sign', '/100%'],
    ['invalid UTF-8', '/%C3'],
    ['an encoded surrogate', '/%ED%A0%80'],
  ])('MALFORMED_PATH for %s', (_label, path) => {
    expect(codeOf(() => build({ path }))).toBe('MALFORMED_PATH');
  });

  it('MALFORMED_PATH for a path that is not a string', () => {
    expect(codeOf(() => build({ path: 42 as unknown as string }))).toBe('MALFORMED_PATH');
  });
});

describe('line 3: the headers', () => {
  it('finds Host in any letter case, with its port', () => {
    for (const name of ['host', 'Host', 'HOST', 'hOsT']) {
      expect(build({ headers: { [name]: 'shop.example.kg:8443' } }).split('\n')[2]).toBe('host:shop.example.kg:8443');
    }
  });

  it('adds every x-api-* header, lower-cased, sorted by code unit, values as given', () => {
    const line = build({
      headers: {
        'X-Api-Zeta': ' z ',
        host: 'h',
        'x-api-Alpha': 'A',
        'X-API-timestamp': '1',
        'x-api-_': '_',
        'x-api-B': 'b',
        'content-type': 'application/json',
        'x-apikey': 'no',
        signature: 'sig',
      },
    }).split('\n')[2];
    expect(line).toBe('host:h&x-api-_:_&x-api-alpha:A&x-api-b:b&x-api-timestamp:1&x-api-zeta: z ');
  });

  it('reads a WHATWG Headers and a plain record the same way', () => {
    const record = { Host: 'shop.example.kg', 'X-Api-Timestamp': '1763712000000', 'x-api-key-id': 'k1', Accept: '*/*' };
    expect(build({ headers: new Headers(record) })).toBe(build({ headers: record }));
  });

  it('joins array values with ", " as HTTP combines repeated headers', () => {
    expect(build({ headers: { host: 'h', 'x-api-list': ['a', 'b'] } }).split('\n')[2]).toBe('host:h&x-api-list:a, b');
    expect(build({ headers: { host: ['h'] } }).split('\n')[2]).toBe('host:h');
  });

  it('skips undefined values and writes numbers, booleans and bigints as text', () => {
    const headers = {
      host: 'h',
      'x-api-gone': undefined,
      'x-api-timestamp': 1763712000000,
      'x-api-live': true,
      'x-api-big': 10n,
    } as unknown as CanonicalRequest['headers'];
    expect(build({ headers }).split('\n')[2]).toBe('host:h&x-api-big:10&x-api-live:true&x-api-timestamp:1763712000000');
  });

  it('reads a Map-like headers object case-insensitively', () => {
    const headers = new Map([
      ['Host', 'h'],
      ['X-Api-Timestamp', '1'],
    ]) as unknown as CanonicalRequest['headers'];
    expect(build({ headers }).split('\n')[2]).toBe('host:h&x-api-timestamp:1');
  });

  it.each([
    ['no Host header', { 'x-api-timestamp': '1' }],
    ['an undefined Host', { host: undefined }],
    ['no headers at all', null],
    ['headers that are a string', 'host: h'],
    ['an empty Headers', new Headers()],
  ])('MISSING_HOST for %s', (_label, headers) => {
    expect(codeOf(() => build({ headers: headers as CanonicalRequest['headers'] }))).toBe('MISSING_HOST');
  });

  it('MISSING_HOST before MALFORMED_PATH and MALFORMED_QUERY, MALFORMED_PATH before MALFORMED_QUERY (CONTRACT §4)', () => {
    const path = '/a%zz';
    const query = 'q=%zz';
    expect(codeOf(() => build({ headers: { 'x-api-timestamp': '1' }, path, query }))).toBe('MISSING_HOST');
    expect(codeOf(() => build({ path, query }))).toBe('MALFORMED_PATH');
  });

  it('an empty Host value is still a Host header', () => {
    expect(build({ headers: { host: '' } }).split('\n')[2]).toBe('host:');
  });

  it('INVALID_ARGUMENT for a header value that is an object, alone or in an array', () => {
    for (const odd of [Object.create(null) as object, ['a', { b: 1 }]]) {
      const headers = { host: 'h', 'x-api-odd': odd } as unknown as CanonicalRequest['headers'];
      expect(codeOf(() => build({ headers }))).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('line 4: the query', () => {
  it('sorts by name and re-encodes with encodeURI(decodeURI(...)), a missing value counting as ""', () => {
    // decodeURI keeps %2F, so encodeURI then escapes its % again: %252F, as the service does.
    expect(
      build({ query: { z: 'ж', a: '%D0%B6', m: null, u: undefined, ' s': 'a b', r: 'a%2Fb' } }).split('\n')[3],
    ).toBe('%20s=a%20b&a=%D0%B6&m=&r=a%252Fb&u=&z=%D0%B6');
    // encodeURI leaves reserved characters as they are (encodeURIComponent would escape them): the line is not
    // split back into parameters, so a value may hold `&`, `=`, `+`, `?` and `/`.
    expect(build({ query: { r: 'https://x.kg/a?b=c', p: 'x+y', q: 'k=v&z' } }).split('\n')[3]).toBe(
      'p=x+y&q=k=v&z&r=https://x.kg/a?b=c',
    );
  });

  it('sorts by UTF-16 code unit, not by locale', () => {
    expect(build({ query: { b: '1', B: '2', a: '3', _: '4', é: '5' } }).split('\n')[3]).toBe(
      'B=2&_=4&a=3&b=1&%C3%A9=5',
    );
  });

  it('reads a map, a URLSearchParams and a raw string the same way', () => {
    const expected = build({ query: { shop: '7', note: 'a b', empty: '' } });
    expect(build({ query: new URLSearchParams({ shop: '7', note: 'a b', empty: '' }) })).toBe(expected);
    expect(build({ query: '?shop=7&note=a+b&empty=' })).toBe(expected);
    expect(build({ query: 'shop=7&note=a%20b&empty' })).toBe(expected);
  });

  it('lets the last repeated name win (raw string, URLSearchParams, array values)', () => {
    expect(build({ query: 'a=1&a=2' }).split('\n')[3]).toBe('a=2');
    expect(
      build({
        query: new URLSearchParams([
          ['a', '1'],
          ['a', '2'],
        ]),
      }).split('\n')[3],
    ).toBe('a=2');
    expect(build({ query: { a: ['1', '2'] } as unknown as Record<string, string> }).split('\n')[3]).toBe('a=2');
  });

  it.each([
    ['a malformed escape in a value', { a: '%zz' }],
    ['a malformed escape in a name', { '%E0%A4%A': '1' }],
    ['invalid UTF-8 in a value', { a: '%C3' }],
    ['a lone surrogate in a value', { a: '\uD800' }],
    ['a lone surrogate in a name', { '\uDC00x': '1' }],
    ['a number value', { a: 1 }],
    ['a nested object value', { a: { b: '1' } }],
    ['a raw string with a malformed escape', 'a=%25zz'],
    ['a query that is a number', 7],
    ['a map-like query with a name that is not a string', new Map([[1, 'a']])],
  ])('MALFORMED_QUERY for %s', (_label, query) => {
    expect(codeOf(() => build({ query: query as CanonicalRequest['query'] }))).toBe('MALFORMED_QUERY');
  });
});

describe('the body line', () => {
  it('is right for long keys and long key lists, however often they come', () => {
    const long = 'k'.repeat(1_500);
    const text = JSON.stringify({ [long]: 1, b: 2, a: 3, 10: 4 });
    for (let i = 0; i < 3; i++)
      expect(build({ body: text }).split('\n').at(-1)).toBe(`{"10":4,"a":3,"b":2,"${long}":1}`);
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`key${299 - i}`, i]));
    const sorted = Object.keys(many).sort((x, y) => x.localeCompare(y, 'en-US'));
    for (let i = 0; i < 2; i++)
      expect(
        build({ body: JSON.stringify(many) })
          .split('\n')
          .at(-1),
      ).toBe(JSON.stringify(Object.fromEntries(sorted.map((k) => [k, many[k]]))));
  });

  const expected = '{"amount":100,"status":"SUCCEEDED"}';

  it('is the same for text, bytes, an ArrayBuffer, a typed-array view and a parsed object', () => {
    const text = '{ "status" : "SUCCEEDED",\n  "amount": 1E2 }';
    const bytes = new TextEncoder().encode(text);
    for (const body of [text, bytes, bytes.buffer, new DataView(bytes.buffer), JSON.parse(text) as object]) {
      expect(build({ body }).split('\n')[3]).toBe(expected);
    }
  });

  it('reads bytes from another realm', () => {
    const foreign = runInNewContext('new Uint8Array([123, 34, 97, 34, 58, 49, 125])') as Uint8Array;
    expect(build({ body: foreign }).split('\n')[3]).toBe('{"a":1}');
  });

  it('sorts top-level keys by en-US collation, integer-like keys first, nested order kept', () => {
    const body = '{"b":1,"B":2,"a":{"z":1,"y":2},"10":0,"9":0,"_x":0,"é":0,"e":0}';
    expect(build({ body }).split('\n')[3]).toBe('{"9":0,"10":0,"_x":0,"a":{"z":1,"y":2},"b":1,"B":2,"e":0,"é":0}');
  });

  it('writes numbers and strings as JSON.stringify writes the parsed value', () => {
    const body = '{"a":100.50,"b":-0,"c":"\\u00e9\\/","d":"\u2028","e":"\\ud800"}';
    expect(build({ body }).split('\n')[3]).toBe('{"a":100.5,"b":0,"c":"é/","d":"\u2028","e":"\\ud800"}');
  });

  it('keeps the wire order of keys that en-US collation ranks equal (a stable sort, as the service)', () => {
    expect('e\u0301'.localeCompare('é', 'en-US')).toBe(0);
    expect(build({ body: '{"é":1,"e\u0301":2}' }).split('\n')[3]).toBe('{"é":1,"e\u0301":2}');
    expect(build({ body: '{"e\u0301":2,"é":1}' }).split('\n')[3]).toBe('{"e\u0301":2,"é":1}');
  });

  it('drops one leading byte-order mark only, never one inside the JSON text', () => {
    expect(build({ body: '\uFEFF{"a":"x\uFEFFy"}' }).split('\n')[3]).toBe('{"a":"x\uFEFFy"}');
    expect(build({ body: '{"a":"\uFEFF"}' }).split('\n')[3]).toBe('{"a":"\uFEFF"}');
  });

  it('lets the last duplicate key win', () => {
    expect(build({ body: '{"a":1,"a":2}' }).split('\n')[3]).toBe('{"a":2}');
  });

  it('keeps a top-level "__proto__" member as an ordinary, signed entry', () => {
    // Deliberate: assigning into `{}` would drop the member from the line, so
    // the signature would not cover it. See lib/json-body.ts.
    expect(build({ body: '{"b":1,"__proto__":{"polluted":true}}' }).split('\n')[3]).toBe(
      '{"__proto__":{"polluted":true},"b":1}',
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    ['text that is not JSON', '{"a":'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"text"'],
    ['a JSON number', '42'],
    ['a JSON boolean', 'true'],
    ['whitespace only', '  '],
    ['text before a JSON null', 'x null'],
    ['text after a JSON null', 'null x'],
    ['invalid UTF-8 bytes', new Uint8Array([0x7b, 0xff, 0x7d])],
    ['a parsed array', [1, 2]],
    ['a parsed number', 42],
    ['a parsed boolean', true],
    // Objects that are not JSON objects: each passed for {} or a list of its characters.
    ['a Map', new Map([['amount', 100]])],
    ['a Set', new Set(['amount'])],
    ['a String object', new String('{"amount":100}')],
    [
      'a Proxy whose keys cannot be listed',
      new Proxy(
        {},
        {
          ownKeys() {
            throw new Error('boom');
          },
        },
      ),
    ],
  ])('INVALID_BODY for %s', (_label, body) => {
    expect(codeOf(() => build({ body }))).toBe('INVALID_BODY');
  });

  it('keeps the underlying error as the cause of INVALID_BODY', () => {
    const errorOf = (body: CanonicalRequest['body']): unknown => {
      try {
        build({ body });
      } catch (error) {
        return error;
      }
      throw new Error('expected INVALID_BODY');
    };
    expect(errorOf('{"a":')).toMatchObject({ code: 'INVALID_BODY', cause: expect.any(SyntaxError) });
    expect(errorOf(new Uint8Array([0x7b, 0xff, 0x7d]))).toMatchObject({
      code: 'INVALID_BODY',
      cause: expect.any(TypeError),
    });
    expect(errorOf({ big: 10n })).toMatchObject({ code: 'INVALID_BODY', cause: expect.any(TypeError) });
  });

  it('INVALID_BODY, not a crash, for parsed values JSON cannot write back', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(codeOf(() => build({ body: cyclic }))).toBe('INVALID_BODY');
    expect(codeOf(() => build({ body: { big: 10n } }))).toBe('INVALID_BODY');
    expect(
      codeOf(() =>
        build({
          body: {
            a: {
              toJSON: () => {
                throw new Error('boom');
              },
            },
          },
        }),
      ),
    ).toBe('INVALID_BODY');
  });

  it('INVALID_BODY, not a stack overflow, for JSON nested deeper than the stack', () => {
    const depth = 200_000;
    const body = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect(codeOf(() => build({ body }))).toBe('INVALID_BODY');
  });
});

describe('misuse', () => {
  it('INVALID_ARGUMENT when the request is not an object', () => {
    expect(codeOf(() => buildCanonicalString(null as unknown as CanonicalRequest))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => buildCanonicalString('POST /' as unknown as CanonicalRequest))).toBe('INVALID_ARGUMENT');
  });

  it('parses the body first: a bad body is reported even when Host is missing too', () => {
    expect(codeOf(() => build({ headers: {}, body: '[' }))).toBe('INVALID_BODY');
  });
});
