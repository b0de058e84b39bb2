// Loopback HTTP clients for the chaos run: node:http for ordinary requests
// (it lets the run send any Host and any request target, `??shop=7` included)
// and a raw socket for what an HTTP client library would smooth over.
import { Agent, request } from 'node:http';
import { connect, createServer } from 'node:net';

export const HOST = '127.0.0.1';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function createAgent() {
  return new Agent({ keepAlive: true, maxSockets: 32 });
}

/**
 * POSTs `body` to `port` + `path` with exactly `headers` (Host included).
 * Resolves `{ status, text }`, or `{ status: 0, error }` when the connection
 * failed or no answer came within `timeoutMs`: never rejects, never hangs.
 */
export function post({ port, path, headers, body, agent, timeoutMs = 15_000 }) {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  headers = { ...headers, 'content-length': String(length) };
  return new Promise((resolve) => {
    let settled = false;
    const done = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = request({ host: HOST, port, path, method: 'POST', headers, agent, setHost: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (error) => done({ status: res.statusCode ?? 0, text: '', error: error.code ?? error.message }));
    });
    const timer = setTimeout(() => {
      req.destroy(new Error('timeout'));
      done({ status: 0, text: '', error: 'timeout' });
    }, timeoutMs);
    req.on('error', (error) => done({ status: 0, text: '', error: error.code ?? error.message }));
    req.end(body);
  });
}

/**
 * Sends a request head and `bodyBytes` bytes of body over a raw socket, as a
 * client that does not wait for an early answer, then reads whatever comes
 * back until the server closes (`readFirst: false`: only once the whole body
 * is written, as simple clients do). `outcome`: `answered` with the status line's
 * code when an answer arrived (even if the socket was reset after it), else
 * `reset` (ECONNRESET / EPIPE) or `closed` (no answer, no error) or `timeout`.
 */
export function rawSend({ port, head, bodyBytes, chunked = false, readFirst = true, timeoutMs = 15_000 }) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: HOST });
    // A client that writes its whole request before it reads (readFirst
    // false) leaves the answer in the kernel's buffer meanwhile.
    if (!readFirst) socket.pause();
    let received = '';
    let settled = false;
    const finish = (outcome, error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      if (match) resolve({ outcome: 'answered', status: Number(match[1]), text: received, error });
      else resolve({ outcome, status: 0, text: received, error });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', (error) =>
      finish(error.code === 'EPIPE' || error.code === 'ECONNRESET' ? 'reset' : 'error', error.code),
    );
    socket.on('close', () => finish('closed'));
    socket.on('connect', async () => {
      socket.write(head);
      const block = Buffer.alloc(16_384, 0x61);
      let left = bodyBytes;
      while (left > 0 && !socket.destroyed) {
        const size = Math.min(left, block.length);
        const piece = size === block.length ? block : block.subarray(0, size);
        const framed = chunked
          ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
          : piece;
        left -= size;
        if (!socket.write(framed)) await new Promise((r) => socket.once('drain', r).once('close', r));
      }
      if (chunked && !socket.destroyed) socket.write('0\r\n\r\n');
      socket.resume();
    });
  });
}
