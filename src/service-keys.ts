/**
 * The service's environments. Each signs with its own key.
 *
 * @example
 * ```ts
 * import type { ServiceEnvironment } from 'payhook';
 *
 * const environment: ServiceEnvironment = process.env.NODE_ENV === 'production' ? 'production' : 'beta';
 * ```
 */
export type ServiceEnvironment = 'production' | 'beta';

/**
 * The public key the service's **production** environment signs webhooks
 * with (PEM, SPKI, RSA 2048). Pass it, or `SERVICE_PUBLIC_KEYS.production`,
 * as `publicKeys`.
 *
 * @example
 * ```ts
 * import { PRODUCTION_PUBLIC_KEY, verifyWebhook } from 'payhook';
 *
 * export async function handle(request: Request): Promise<Response> {
 *   const result = await verifyWebhook(
 *     { method: request.method, url: request.url, headers: request.headers, body: await request.text() },
 *     // webhookUrl: the URL you registered; without it, a delivery signed for another merchant verifies too.
 *     { publicKeys: PRODUCTION_PUBLIC_KEY, webhookUrl: 'https://shop.example.kg/webhooks/payments' },
 *   );
 *   return new Response(null, { status: result.ok ? 200 : 401 });
 * }
 * ```
 */
export const PRODUCTION_PUBLIC_KEY: string = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAuF/PUmhMPPidcMxhZBPb
BSGJoSphmCI+h6ru8fG8guAlcPMVlhs+ThTjw2LHABvciwtpj51ebJ4EqhlySPyT
hqSfXI6Jp5dPGJNDguxfocohaz98wvT+WAF86DEglZ8dEsfoumojFUy5sTOBdHEu
g94B4BbrJvjmBa1YIx9Azse4HFlWhzZoYPgyQpArhokeHOHIN2QFzJqeriANO+wV
aUMta2AhRVZHbfyJ36XPhGO6A5FYQWgjzkI65cxZs5LaNFmRx6pjnhjIeVKKgF99
4OoYCzhuR9QmWkPl7tL4Kd68qa/xHLz0Psnuhm0CStWOYUu3J7ZpzRK8GoEXRcr8
tQIDAQAB
-----END PUBLIC KEY-----
`;

/**
 * The public key the service's **beta** (sandbox) environment signs webhooks
 * with (PEM, SPKI, RSA 2048).
 *
 * @example
 * ```ts
 * import { BETA_PUBLIC_KEY, verifySignature } from 'payhook';
 *
 * const canonical = 'post\n/webhooks/payments\nhost:sandbox.shop.example.kg\n{}';
 * const ok = await verifySignature(canonical, 'c2lnbmF0dXJl', BETA_PUBLIC_KEY); // false: not the service's signature
 * ```
 */
export const BETA_PUBLIC_KEY: string = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwlrlKz/8gLWd1ARWGA/8
o3a3Qy8G+hPifyqiPosiTY6nCHovANMIJXk6DH4qAqqZeLu8pLGxudkPbv8dSyG7
F9PZEAryMPzjoB/9P/F6g0W46K/FHDtwTM3YIVvstbEbL19m8yddv/xCT9JPPJTb
LsSTVZq5zCqvKzpupwlGS3Q3oPyLAYe+ZUn4Bx2J1WQrBu3b08fNaR3E8pAkCK27
JqFnP0eFfa817VCtyVKcFHb5ij/D0eUP519Qr/pgn+gsoG63W4pPHN/pKwQUUiAy
uLSHqL5S2yu1dffyMcMVi9E/Q2HCTcez5OvOllgOtkNYHSv9pnrMRuws3u87+hNT
ZwIDAQAB
-----END PUBLIC KEY-----
`;

/**
 * Both environments' public keys by name, so configuration can pick one:
 * `SERVICE_PUBLIC_KEYS[env]`.
 *
 * @example
 * ```ts
 * import { SERVICE_PUBLIC_KEYS, type ServiceEnvironment } from 'payhook';
 *
 * const env = (process.env.PAYMENT_ENV ?? 'beta') as ServiceEnvironment;
 * const publicKeys = SERVICE_PUBLIC_KEYS[env];
 * ```
 */
export const SERVICE_PUBLIC_KEYS: Readonly<Record<ServiceEnvironment, string>> = /* @__PURE__ */ Object.freeze({
  production: PRODUCTION_PUBLIC_KEY,
  beta: BETA_PUBLIC_KEY,
});
