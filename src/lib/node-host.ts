// The host a Node request names, as payhook/node hands it to the core and
// captureDelivery records it. Internal.

/**
 * Internal: the `host` to read from a Node request's headers: its Host lines
 * when there are several (Node keeps only the first in `headers`), and the
 * `:authority` pseudo-header that `node:http2` (its compatibility API) gives,
 * which stands for Host as HTTP/2 defines it, joined with `, ` as a Web
 * `Headers` joins repeated lines. The core takes names of one host as that
 * host and refuses several, alike for both handlers. `headers.host` as is
 * when there is nothing to join.
 */
export function nodeHost(headers: Readonly<Record<string, unknown>>, rawHeaders: readonly string[] = []): unknown {
  const lines: string[] = [];
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length === 4 && name.toLowerCase() === 'host') lines.push(rawHeaders[index + 1]!);
  }
  let host = lines.length > 1 ? lines.join(', ') : headers['host'];
  const authority = headers[':authority'];
  if (typeof authority === 'string') host = typeof host === 'string' ? `${host}, ${authority}` : authority;
  return host;
}
