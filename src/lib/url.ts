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
