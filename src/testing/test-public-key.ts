/**
 * The public half of payhook's published test key pair, apart from the
 * private half so that what only needs to recognise test signatures
 * (`payhook/explain`) ships no private key.
 *
 * @module
 */

/** Internal: `TEST_KEY_PAIR.publicKey`. */
export const TEST_PUBLIC_KEY: string = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAx77imKP28uVte98OZiMR
thMSHg01oBM7xFmkewV24oeR3cezoHvkRD3nGATRRTVCqcV9RPjGVtI89tXRtvCR
ad9vYVwX2z/ZEPKmxTUe02wb7hzNVcMhd/z82wEfvjaUcW4YzuDhiC6s8RQhimCP
zSXqwJKWtrZdZrzJJed+0TBmxpYr/8CjPFqhqpYVlEZxohYa+Vw2Zty5OvsUD/yA
RNYafdVgzaho6n1Pn719BcbkIwCilumuwOktJJUjuhvhXhFKglwOvYUJO/boeHKV
g/r8IfDsYgn/c3f68R1tvFoAVL3QEETXMBS/NBiNU91bG32NPS8vSwul+C42lFCr
zwIDAQAB
-----END PUBLIC KEY-----
`;
