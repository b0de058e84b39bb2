// Internal: how a store that keeps text as UTF-8 (SQLite, PostgreSQL, Redis
// through its clients) writes a key, one-to-one. Not exported by the package.

// A lone surrogate, which UTF-8 cannot carry: drivers and clients write U+FFFD instead.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A key (or any string) as stored, one-to-one: UTF-8 turns every lone
 * surrogate into U+FFFD, so two keys would collide (two deliveries, one
 * record), and SQLite and PostgreSQL text hold no NUL. Such a string, or one
 * that starts with `"` (so the mapping stays one-to-one), is stored as its
 * JSON literal, which starts with `"`. Everything else is stored as it is.
 */
export function storedKey(key: string): string {
  return key.startsWith('"') || key.includes('\0') || LONE_SURROGATE.test(key) ? JSON.stringify(key) : key;
}
