// payhook/testing: test keys, deliveries and signing; `toRequest` gives a
// global Request, so like payhook/web it is checked with DOM or @types/node.
import { TEST_KEY_PAIR, createTestWebhook, generateTestKeyPair, signWebhook, toRequest } from 'payhook/testing';

export async function request(): Promise<Request> {
  const keys = await generateTestKeyPair();
  void keys;
  const signed = await signWebhook(createTestWebhook({}), {
    privateKey: TEST_KEY_PAIR.privateKey,
    url: 'https://shop.example.kg/webhooks/payments',
  });
  return toRequest(signed);
}
