import { TEST_KEY_WARNING } from '../../src/handler/flow.js';
import type { WebhookLogRecord } from '../../src/handler/hooks.js';

/**
 * A handler's `logger` that collects its records into `logs`, leaving out the start-up warning that publicKeys
 * hold payhook's published test key: it is the key these tests sign with, and one test asserts the warning.
 */
export function collectInto(logs: WebhookLogRecord[]): (record: WebhookLogRecord) => void {
  return (record) => {
    if (record.message !== TEST_KEY_WARNING) logs.push(record);
  };
}
