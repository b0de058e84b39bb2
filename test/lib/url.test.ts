import { describe, expect, it } from 'vitest';
import { redactQuery, redactUrl, splitUrl } from '../../src/lib/url.js';

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

describe('redactUrl and redactQuery', () => {
  it.each([
    ['https://shop.example.kg/webhooks/payments', 'https://shop.example.kg/webhooks/payments'],
    ['https://hook:Pa55w0rd@shop.example.kg/hook?token=S3CRET#x', 'https://shop.example.kg/hook?…'],
    ['http://user@localhost:3000/a%2Fb?9f86d081884c7d65', 'http://localhost:3000/a%2Fb?…'],
    ['https://shop.example.kg/hook?', 'https://shop.example.kg/hook'],
    ['/hook?shop=7', '/hook?…'],
  ])('redactUrl(%j) is %j: no user information, no query', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it.each([
    ['token=S3CRET&shop=7', 'token=…&shop=…'],
    // A bare name may itself be the secret.
    ['9f86d081884c7d65', '…'],
    ['a=&b', 'a=…&…'],
    ['', ''],
  ])('redactQuery(%j) is %j: names kept, values hidden', (query, shown) => {
    expect(redactQuery(query)).toBe(shown);
  });
});
