import { describe, expect, it } from 'vitest';
import { parseCapturedRequest } from '../../src/cli/request-file.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const head = 'POST /webhooks/payments HTTP/1.1\r\nhost: shop.example.kg\r\n';

describe('a raw HTTP capture', () => {
  it('drops the line break that ends the file, which is not the body', () => {
    expect(parseCapturedRequest(bytes(`${head}\r\n{"id":"1"}\n`)).body).toBe('{"id":"1"}');
    expect(parseCapturedRequest(bytes(`${head}\r\n{"id":"1"}\r\n`)).body).toBe('{"id":"1"}');
  });

  // A "follow stream" copy: the request's body, exactly its declared length, then the answer.
  it('keeps the body exactly as declared when an answer follows it, its own last line break included', () => {
    const body = '{"id":"1"}\n';
    const file = `${head}content-length: ${body.length}\r\n\r\n${body}HTTP/1.1 200 OK\r\n\r\n{"ok":true}\n`;
    expect(parseCapturedRequest(bytes(file)).body).toBe(body);
  });
});
