import { signWebhook, TEST_KEY_PAIR } from 'payhook/testing';

export type Signed = Awaited<ReturnType<typeof signWebhook>>;
export const keys: typeof TEST_KEY_PAIR = TEST_KEY_PAIR;
