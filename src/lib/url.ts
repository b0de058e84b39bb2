/** A URL split into its raw parts, nothing decoded or normalised. */
export interface UrlParts {
  authority: string | undefined;
  path: string;
  query: string;
}

const URL_PARTS = /^(?:[a-z][\w+.-]*:\/\/(?:[^/?#]*@)?([^/?#]*))?([^?#]*)(?:\?([^#]*))?/i;

/**
 * Splits an absolute URL or a request target (`/p?q`) without `new URL`
 * (which refuses relative input and normalises the path). The path stays
 * percent-encoded (`/` when an absolute URL has none); the query is the raw
 * text after `?`; a fragment is dropped.
 *
 * @example
 * ```ts
 * import { splitUrl } from './url.js';
 *
 * splitUrl('https://shop.example.kg/hook?shop=7'); // { authority: 'shop.example.kg', path: '/hook', query: 'shop=7' }
 * ```
 */
export function splitUrl(url: string): UrlParts {
  // The path group always takes part in the match (it may match nothing).
  const [, authority, path, query = ''] = URL_PARTS.exec(url) as RegExpExecArray & [string, string | undefined, string];
  return { authority, path: authority !== undefined && path === '' ? '/' : path, query };
}

const SCHEME = /^[a-z][\w+.-]*:/i;

/**
 * A URL as payhook prints it in an answer, a log line or a diagnosis: a
 * registered URL may carry a secret in its user and password or its query
 * (a token, even as a bare name), so only the scheme, host and path are
 * shown, and a query as `?…`.
 *
 * @example
 * ```ts
 * import { redactUrl } from './url.js';
 *
 * redactUrl('https://hook:pw@shop.example.kg/hook?token=t'); // 'https://shop.example.kg/hook?…'
 * ```
 */
export function redactUrl(url: string): string {
  const { authority, path, query } = splitUrl(url);
  const origin = authority === undefined ? '' : `${SCHEME.exec(url)?.[0] ?? ''}//${authority}`;
  return `${origin}${path}${query === '' ? '' : '?…'}`;
}

/**
 * A query as a diagnosis names it: its parameter names, every value hidden,
 * and a bare name (which may itself be the secret) hidden too.
 *
 * @example
 * ```ts
 * import { redactQuery } from './url.js';
 *
 * redactQuery('token=t&shop=7'); // 'token=…&shop=…'
 * ```
 */
export function redactQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((part) => (part.includes('=') ? `${part.slice(0, part.indexOf('='))}=…` : '…'))
    .join('&');
}
