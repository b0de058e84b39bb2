/**
 * The keys explain tries, by name: the configured ones first (the baseline),
 * then the likely wrong ones — the other service environment, payhook's own
 * published test key (a test delivery sent to a real receiver is a common
 * mistake), and the caller's alternatives.
 *
 * @module
 */
import { isPayhookError } from '../lib/errors.js';
import { importKeys } from '../lib/key-import.js';
import type { KeyInput, KeyOptions } from '../lib/key-types.js';
import { SERVICE_PUBLIC_KEYS, type ServiceEnvironment } from '../service-keys.js';
import { TEST_PUBLIC_KEY } from '../testing/test-public-key.js';
import type { ExplainOptions } from './types.js';

/** The most keys tried, whatever the options hold. */
const MAX_KEYS = 6;

/** The name payhook's published test key is reported by. */
export const TEST_KEY_NAME = 'payhook-test';

/** The name a service environment's key is reported by (as in the conformance key set). */
export const environmentKeyName = (environment: ServiceEnvironment): string => `service-${environment}`;

/** A key explain tries: its name, whether the receiver is configured with it, and the imported key. */
export interface NamedKey {
  readonly name: string;
  readonly configured: boolean;
  readonly imported: CryptoKey;
}

/** The keys explain can use, and the ones it could not import (`name (CODE)`) or left out past the most it tries. */
export interface CandidateKeys {
  readonly usable: readonly NamedKey[];
  readonly unusable: readonly string[];
  /** The names of the configured keys, usable or not. */
  readonly configuredNames: readonly string[];
}

/** One spelling for a key, so that one PEM written two ways is one key. */
const identity = (key: KeyInput): unknown => (typeof key === 'string' ? key.replace(/\s+/g, '') : key);

/**
 * The configured keys, then the other environments' keys, payhook's test
 * key and the alternatives, each once (at most {@link MAX_KEYS}), imported.
 *
 * @example
 * ```ts
 * import { candidateKeys } from './keys.js';
 *
 * const { usable } = await candidateKeys({ environment: 'production' });
 * usable.map((key) => key.name); // ['service-production', 'service-beta', 'payhook-test']
 * ```
 */
export async function candidateKeys(options: ExplainOptions): Promise<CandidateKeys> {
  const environmentKeys = options.environmentKeys ?? SERVICE_PUBLIC_KEYS;
  const known: Array<[name: string, key: KeyInput]> = [];
  for (const environment of Object.keys(environmentKeys) as ServiceEnvironment[]) {
    const key = environmentKeys[environment];
    if (key !== undefined) known.push([environmentKeyName(environment), key]);
  }
  // A configured key that is an environment's goes by the environment's name.
  const environments = [...known];
  const nameOf = (key: KeyInput): string | undefined =>
    environments.find(([, other]) => identity(other) === identity(key))?.[0];
  known.push([TEST_KEY_NAME, TEST_PUBLIC_KEY]);

  const list: Array<{ name: string; key: KeyInput; configured: boolean }> = [];
  const leftOut: string[] = [];
  const add = (name: string, key: KeyInput, configured: boolean): void => {
    if (list.some((entry) => identity(entry.key) === identity(key))) return;
    if (list.length < MAX_KEYS) list.push({ name, key, configured });
    else leftOut.push(`${name} (not tried: at most ${MAX_KEYS} keys)`);
  };
  const configured: readonly KeyInput[] =
    options.publicKeys === undefined || options.publicKeys === null ? [] : [options.publicKeys].flat();
  configured.forEach((key, index) =>
    add(nameOf(key) ?? (configured.length === 1 ? 'the configured key' : `configured key ${index + 1}`), key, true),
  );
  for (const environment of [options.environment ?? []].flat()) {
    const key = environmentKeys[environment];
    if (key !== undefined) add(environmentKeyName(environment), key, true);
  }
  for (const [name, key] of known) add(name, key, false);
  for (const [name, key] of Object.entries(options.alternativeKeys ?? {})) add(name, key, false);

  const keyOptions: KeyOptions = { allowWeakKeys: options.allowWeakKeys === true };
  const usable: NamedKey[] = [];
  const unusable: string[] = [...leftOut];
  for (const { name, key, configured: isConfigured } of list) {
    try {
      const [imported] = await importKeys([key], keyOptions);
      usable.push({ name, configured: isConfigured, imported: imported! });
    } catch (error) {
      unusable.push(`${name} (${isPayhookError(error) ? error.code : 'unreadable'})`);
    }
  }
  return { usable, unusable, configuredNames: list.filter((key) => key.configured).map((key) => key.name) };
}
