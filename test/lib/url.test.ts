import { describe, expect, it } from 'vitest';
import { splitUrl } from '../../src/lib/url.js';

describe('splitUrl', () => {
  it.each([
    ['/webhooks/payments', undefined, '/webhooks/payments', ''],
    ['/hook?token=s3cr%20et&shop=7', undefined, '/hook', 'token=s3cr%20et&shop=7'],
    ['https://shop.example.kg/hook?x=1#frag', 'shop.example.kg', '/hook', 'x=1'],
    ['https://shop.example.kg', 'shop.example.kg', '/', ''],
    ['https://shop.example.kg?x=1', 'shop.example.kg', '/', 'x=1'],
    ['http://user:pw@localhost:3000/a%2Fb', 'localhost:3000', '/a%2Fb', ''],
    ['?only=query', undefined, '', 'only=query'],
    ['', undefined, '', ''],
  ])('%j → authority %j, path %j, query %j', (url, authority, path, query) => {
    expect(splitUrl(url)).toEqual({ authority, path, query });
  });

  it('keeps the path percent-encoded and the query raw', () => {
    expect(splitUrl('/%D0%B2%D0%B5%D0%B1?a=%2B&b=x+y')).toEqual({
      authority: undefined,
      path: '/%D0%B2%D0%B5%D0%B1',
      query: 'a=%2B&b=x+y',
    });
  });
});
