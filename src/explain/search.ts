/**
 * The bounded search: variations of the signed target, each with each key
 * whose length fits the signature (another key counting as a cause), fewest
 * causes first, until one verifies or the budget is spent.
 *
 * @module
 */
import { canonicalHead } from '../lib/canonical.js';
import { forEachHeader } from '../lib/headers.js';
import { verifyWithKeys } from '../lib/rsa-verify.js';
import type { SignedTarget } from '../lib/signed-target.js';
import type { Candidates } from './candidates.js';
import type { NamedKey } from './keys.js';
import type { DiagnosisChange } from './types.js';

/** The most signature checks one diagnosis makes. */
export const MAX_CHECKS = 600;

/** One variation of the target: its host, path and query, and the `x-api-*` headers left out. */
interface Variant {
  readonly host: string;
  readonly path: string;
  readonly query: string;
  readonly dropHeaders: readonly string[];
}

/** What made the signature verify. */
export interface Found {
  readonly variant: Variant;
  /** The target's parts that differ (a `key` change is added by the caller). */
  readonly changes: readonly DiagnosisChange[];
  readonly key: NamedKey;
  readonly canonical: string;
}

/** One variation of the target with what differs in it; `whole`: a registered URL tried as a whole, one cause. */
interface Tried {
  readonly variant: Variant;
  readonly changes: DiagnosisChange[];
  readonly whole?: boolean;
}

/** The causes a variant stands for: each URL part changed (a registered URL whole is one), and one for headers. */
function causesOf({ changes, whole }: Tried): number {
  const parts = new Set(changes.map((one) => one.part));
  const url = ['host', 'path', 'query'].filter((part) => parts.has(part as DiagnosisChange['part'])).length;
  return (whole === true ? Math.min(url, 1) : url) + (parts.has('header') ? 1 : 0);
}

const change = (part: DiagnosisChange['part'], received: string, expected: string): DiagnosisChange => ({
  part,
  received,
  expected,
});

/**
 * Every variant, fewest changes first: each single change (the added
 * `x-api-*` headers left out one by one, then all together), the registered
 * URL as a whole (one cause: the URL the service signed), each host, path
 * and query with every added header left out (one proxy doing both), pairs
 * of host, path and query, then each host, path and query with each added
 * header alone left out.
 */
function variantsOf(target: SignedTarget, candidates: Candidates): Tried[] {
  const base: Variant = { host: target.host as string, path: target.path, query: target.query, dropHeaders: [] };
  const hosts = candidates.hosts.slice(1).map((host) => ({ host, change: change('host', base.host, host) }));
  const paths = candidates.paths.slice(1).map((path) => ({ path, change: change('path', base.path, path) }));
  const queries = candidates.queries.slice(1).map((query) => ({ query, change: change('query', base.query, query) }));
  const variants: Tried[] = [{ variant: base, changes: [] }];
  for (const h of hosts) variants.push({ variant: { ...base, host: h.host }, changes: [h.change] });
  for (const p of paths) variants.push({ variant: { ...base, path: p.path }, changes: [p.change] });
  for (const q of queries) variants.push({ variant: { ...base, query: q.query }, changes: [q.change] });
  // Each x-api-* header that may have been added, then all of them (a gateway adding two).
  const { droppable } = candidates;
  const drops: Array<readonly string[]> = droppable.map((name) => [name]);
  if (droppable.length > 1) drops.push(droppable);
  const dropped = (names: readonly string[]) => names.map((name) => change('header', name, ''));
  for (const names of drops) variants.push({ variant: { ...base, dropHeaders: names }, changes: dropped(names) });
  // The registered URL whole when its host, path and query all differ (no single change or pair below can find
  // it), then each registered URL the request does not tell apart, whole (its host, path and query can all differ
  // from the first's): each as signed and with every added header left out, a delivery for it that a proxy also
  // changed. Each header alone comes last, with the others of its kind.
  const urlOf = ({ host, path, query }: { host: string; path: string; query: string }) => ({
    part: { host, path, query },
    changes: [
      change('host', base.host, host),
      change('path', base.path, path),
      change('query', base.query, query),
    ].filter((one) => one.received !== one.expected),
    whole: true,
  });
  const { registered } = candidates;
  const whole = [
    ...(registered === undefined ? [] : [urlOf(registered)]).filter(({ changes }) => changes.length === 3),
    ...candidates.ties.map(urlOf),
  ];
  for (const { part, changes } of whole) {
    variants.push({ variant: { ...base, ...part }, changes, whole: true });
    if (droppable.length > 0) {
      variants.push({
        variant: { ...base, ...part, dropHeaders: droppable },
        changes: [...changes, ...dropped(droppable)],
        whole: true,
      });
    }
  }
  // One proxy that adds headers and also rewrites Host, path or query: every added header left out, with each.
  const parts = [...hosts, ...paths, ...queries];
  if (droppable.length > 0) {
    for (const { change: cause, ...part } of parts) {
      variants.push({ variant: { ...base, ...part, dropHeaders: droppable }, changes: [cause, ...dropped(droppable)] });
    }
  }
  for (const h of hosts) {
    for (const p of paths)
      variants.push({ variant: { ...base, host: h.host, path: p.path }, changes: [h.change, p.change] });
    for (const q of queries) {
      variants.push({ variant: { ...base, host: h.host, query: q.query }, changes: [h.change, q.change] });
    }
  }
  for (const p of paths) {
    for (const q of queries) {
      variants.push({ variant: { ...base, path: p.path, query: q.query }, changes: [p.change, q.change] });
    }
  }
  // Then each header alone with each of them, last: the service may sign x-api-* headers of its own, which leaving
  // every one out drops too.
  if (droppable.length > 1) {
    const urlChanges = [
      ...parts.map(({ change: cause, ...part }) => ({ part, changes: [cause], whole: false })),
      ...whole,
    ];
    for (const { part, changes, whole: isWhole } of urlChanges) {
      for (const name of droppable) {
        variants.push({
          variant: { ...base, ...part, dropHeaders: [name] },
          changes: [...changes, ...dropped([name])],
          whole: isWhole,
        });
      }
    }
  }
  return variants;
}

/**
 * Searches variations of `target` for one that `signature` verifies with,
 * under any of `keys` (those whose modulus fits the signature's length). The
 * body line is written once by the caller and appended to each variant's
 * lines 1 to 4. `checks` counts the checks made so far (the as-received
 * string's against the configured keys) and is advanced here.
 *
 * @example
 * ```ts
 * import { searchVariants } from './search.js';
 *
 * declare const target: import('../lib/signed-target.js').SignedTarget;
 * declare const candidates: import('./candidates.js').Candidates;
 * declare const keys: import('./keys.js').NamedKey[];
 * const counter = { checks: 0 };
 * const found = await searchVariants(target, candidates, '{}', new Uint8Array(256), keys, counter);
 * ```
 */
export async function searchVariants(
  target: SignedTarget,
  candidates: Candidates,
  bodyLine: string,
  signature: Uint8Array,
  keys: readonly NamedKey[],
  counter: { checks: number },
): Promise<Found | undefined> {
  if (keys.length === 0) return undefined;
  const apiHeaders: Record<string, string> = {};
  forEachHeader(target.headers, (name, value) => {
    if (name.startsWith('x-api-')) apiHeaders[name] = value;
  });
  // Each variant's lines 1 to 4; the body line is added at each check, so only one whole string is held at a time.
  const variants = variantsOf(target, candidates).flatMap((tried) => {
    const { variant } = tried;
    const kept = { ...apiHeaders };
    for (const name of variant.dropHeaders) delete kept[name];
    const { path, host, query } = variant;
    try {
      return [{ ...tried, head: canonicalHead({ method: target.method, path, host, headers: kept, query }) }];
    } catch {
      return []; // this variant's path or query cannot be written: not a candidate
    }
  });
  // Each variant with each key, fewest causes first (another key is one; so is the registered URL as a whole, and
  // any added headers left out), in the order above among equals: several keys then do not each cost every variant
  // a check before a proxy's two changes under the configured key are tried. The as-received string was already
  // checked against the configured keys.
  const tries = variants
    .flatMap((tried) => keys.map((key) => ({ ...tried, key, causes: causesOf(tried) + (key.configured ? 0 : 1) })))
    .filter(({ causes }) => causes > 0)
    .sort((a, b) => a.causes - b.causes);
  for (const { variant, changes, head, key } of tries) {
    if (counter.checks >= MAX_CHECKS) break;
    counter.checks++;
    const canonical = head + bodyLine;
    if (await verifyWithKeys([key.imported], canonical, signature)) return { variant, changes, key, canonical };
  }
  return undefined;
}
