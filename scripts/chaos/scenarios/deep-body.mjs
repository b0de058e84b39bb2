// Issue 23 defect 1 (and 4): a body nested thousands of levels deep cost tens
// of milliseconds of event loop per request, forged or carrying a genuine
// signature replayed from another delivery, and its verdict depended on the key
// form. The contract (§8) makes a body nested deeper than 64 levels
// INVALID_BODY before any parse, and (§4) a signature no key can have made
// SIGNATURE_MISMATCH before any body error. Sent here, on one receiver per key
// form (PEM, JWK, non-extractable CryptoKey) with default options: each deep
// shape up to the default maxBodyBytes, forged (a random signature of the right
// length) and replayed (a genuine delivery's headers over the deep body).
// Beside them, bodies of thousands of members (a 32 KiB body of tiny top-level
// keys cost 6.5 ms under a replayed genuine signature, the en-US sort of its
// keys; more than 1,000 top-level members, or 4,096 characters of top-level
// names, are now INVALID_BODY), names of combining marks out of canonical order
// (the costliest to compare), and members under one key, which a full check
// must read. Measured: the event-loop time one such body costs (median of 20, alone), and
// the p99 of genuine deliveries while two clients send such bodies as fast as
// they can. Judged: no false accept, one code per body and key form, the
// contract's code, and the same code for a replayed body on every key form.
import { randomBytes, webcrypto } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DEFAULT_MAX_BODY_BYTES } from 'payhook';
import { createTestWebhook, TEST_KEY_PAIR } from 'payhook/testing';
import { judgeTiming, percentile, round } from '../report.mjs';
import { send, sign, startReceiver, validUnderLoad, verdictOf } from '../harness.mjs';
import { post } from '../net.mjs';

/** The most event loop one such body may cost (median of 20). */
const DEEP_BODY_MS = 5;
const SAMPLES = 20;

/** `{"a0":[[…]],…,"a<n-1>":[[…]],"~":"xx…"}`: `count` arrays each nested `depth` deep, padded to `bytes` when given. */
export function nestedArrays(count, depth, bytes) {
  const members = Array.from({ length: count }, (_, i) => `"a${i}":${'['.repeat(depth)}${']'.repeat(depth)}`);
  const head = `{${members.join(',')}`;
  if (bytes === undefined) return Buffer.from(`${head}}`);
  const filler = bytes - head.length - 8; // `,"~":"` and `"}`
  if (filler < 0) throw new Error(`${count} arrays ${depth} deep do not fit in ${bytes} bytes`);
  return Buffer.from(`${head},"~":"${'x'.repeat(filler)}"}`);
}

/** `{"a":{"a":…{}…}}`, as deep as `bytes` allows. */
export function nestedObjects(bytes) {
  const depth = Math.floor((bytes - 2) / 6);
  return Buffer.from(`${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`);
}

const MAX = DEFAULT_MAX_BODY_BYTES;
const KiB = (bytes) => `${Math.round(bytes / 1024)}KiB`;
// Eight arrays as deep as fit in maxBodyBytes (at 64 KiB: 4,092 each, the shape the cost was first seen on).
const EIGHT_DEEP = Math.floor((MAX - 8 * 6 - 16) / 16);

/** [label, body]: the deep shapes, each at most maxBodyBytes (the default: the receivers keep default options). */
export const SHAPES = [
  [`8x${EIGHT_DEEP}@${KiB(MAX)}`, nestedArrays(8, EIGHT_DEEP, MAX)],
  ['1x4090@8KiB', nestedArrays(1, 4_090)], // one array 4,090 deep, just under 8 KiB
  [`array-max@${KiB(MAX)}`, nestedArrays(1, Math.floor((MAX - 8) / 2))], // as deep as maxBodyBytes allows
  [`objects-max@${KiB(MAX)}`, nestedObjects(MAX)], // objects in objects, as deep as maxBodyBytes allows
];

/** `{"0":0,"1":0,…}`: as many members of `container` (top level, or one object under "a") as fit in `bytes`. */
export function manyMembers(bytes, container = 'top') {
  const [open, close] = container === 'top' ? ['{', '}'] : ['{"a":{', '}}'];
  const members = [];
  let length = open.length + close.length;
  for (let i = 0; ; i++) {
    const member = `${i === 0 ? '' : ','}"${i.toString(36)}":0`;
    if (length + member.length > bytes) break;
    members.push(member);
    length += member.length;
  }
  return Buffer.from(`${open}${members.join('')}${close}`);
}

/**
 * `count` top-level names, each `units` letters carrying combining marks in one of two orders (one of them out of
 * canonical order, so the collator normalises it at every comparison), made distinct by a base-36 suffix.
 */
export function markNames(count, units, marks = ['\u0301\u0327', '\u0327\u0301']) {
  const members = [];
  for (let i = 0; i < count; i++) {
    let name = '';
    for (let j = 0; j < units; j++) name += marks[(i >> (j % 10)) & 1];
    members.push(`"${name}${i.toString(36)}":0`);
  }
  // In a fixed shuffled order (a linear congruential sequence): sorting names that come nearly in order is cheap.
  for (let i = members.length - 1, seed = 12_345; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = seed % (i + 1);
    [members[i], members[j]] = [members[j], members[i]];
  }
  return Buffer.from(`{${members.join(',')}}`);
}

/**
 * [label, body, readable]: bodies of thousands of members, whose cost is the en-US sort of the top-level names and
 * the parse and write-back of the rest. Over the contract's bounds (1,000 top-level members, 4,096 characters of
 * top-level names) they are INVALID_BODY like a deep body; within them, or under one key, a readable body that
 * only its signature refuses.
 */
export const WIDE_SHAPES = [
  [`members-max@${KiB(MAX)}`, manyMembers(MAX), false],
  [`nested-members-max@${KiB(MAX)}`, manyMembers(MAX, 'nested'), true],
  // 1,000 names of 12 marks and a suffix, over the names' bound (9-10 ms before it).
  ['marks-1000x6', markNames(1_000, 6), false],
  // The same names, as many as the names' bound lets through: the costliest names still sorted.
  ['marks-290x6-within', markNames(290, 6), true],
];

/** The key forms a merchant may configure, all of TEST_KEY_PAIR's public key. */
async function keyForms() {
  const der = Buffer.from(TEST_KEY_PAIR.publicKey.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const extractable = await webcrypto.subtle.importKey('spki', der, algorithm, true, ['verify']);
  return [
    ['PEM', TEST_KEY_PAIR.publicKey],
    ['JWK', await webcrypto.subtle.exportKey('jwk', extractable)],
    ['CryptoKey', await webcrypto.subtle.importKey('spki', der, algorithm, false, ['verify'])],
  ];
}

/**
 * The contract's verdict: a genuine signature could have been made by the
 * key, so the depth decides (INVALID_BODY, §8); a random one cannot have been
 * made by a key whose numbers are known (SIGNATURE_MISMATCH, §4), while a
 * non-extractable CryptoKey skips that test and the depth decides, in
 * payhook/node too (node:crypto could read its numbers, but both handlers give
 * one verdict).
 */
function expectedCode(kind, keyForm, readable) {
  return readable || (kind === 'forged' && keyForm !== 'CryptoKey') ? 'SIGNATURE_MISMATCH' : 'INVALID_BODY';
}

/** [label, body, readable]: every shape judged, and whether a full check reads its body (then only the signature refuses it). */
const JUDGED = [...SHAPES.map(([label, body]) => [label, body, false]), ...WIDE_SHAPES];

export const deepBody = {
  id: '10',
  name: 'deep-body',
  title:
    'bodies nested thousands deep or of thousands of members, forged and with replayed genuine signatures, on every key form; two flooders',
  // The deep bodies never reach the store.
  pairs: ['node/memory', 'web/memory'],
  quickPairs: ['node/memory'],
  async run(ctx, pair, ledger) {
    const floodMs = ctx.quick ? 3_000 : 5_000;
    const intervalMs = 20;
    const validTimeoutMs = 5_000;
    const forms = await keyForms();
    const receivers = [];
    try {
      for (const [form, key] of forms) {
        const receiver = await startReceiver({ ...pair, clients: ctx.clients, ledger, options: { publicKeys: key } });
        receivers.push({ form, receiver });
      }
      const signatureBytes = Buffer.from(
        (await sign(receivers[0].receiver, createTestWebhook())).headers.signature,
        'base64',
      ).length;
      let sentDeep = 0;
      /** Sends one deep body to `receiver`; resolves its answer. */
      const sendDeep = async (receiver, body, kind, replayed) => {
        const id = `deep-${++sentDeep}`;
        ledger.sent(id, 'refuse');
        const headers =
          kind === 'replayed'
            ? replayed
            : {
                host: receiver.host,
                'content-type': 'application/json',
                'x-api-timestamp': String(Date.now()),
                signature: randomBytes(signatureBytes).toString('base64'),
              };
        const answer = await post({ port: receiver.port, path: '/hook', headers, body, agent: receiver.agent });
        ledger.answer(id, answer.status);
        return answer;
      };

      // Each receiver: a genuine delivery (which warms the key), whose headers are then replayed.
      const captured = new Map();
      for (const { receiver } of receivers) {
        const webhook = createTestWebhook();
        const genuine = await sign(receiver, webhook);
        captured.set(receiver, genuine.headers);
        ledger.sent(webhook.id, 'handle');
        await send(receiver, ledger, webhook.id, genuine);
      }

      // 1. One body at a time: its verdict on every key form, and the event-loop time it costs.
      const verdicts = new Map(); // `${shape}|${kind}` -> Map(form -> Set(codes))
      let costliest = { cost: 0, label: '' };
      for (const [shape, body, readable] of JUDGED) {
        for (const kind of ['forged', 'replayed']) {
          const label = `${kind} ${shape}`;
          const byForm = new Map();
          let worst = 0;
          for (const { form, receiver } of receivers) {
            const codes = new Set();
            await sendDeep(receiver, body, kind, captured.get(receiver)); // warm this path
            const costs = [];
            for (let i = 0; i < SAMPLES; i++) {
              const before = performance.eventLoopUtilization();
              const answer = await sendDeep(receiver, body, kind, captured.get(receiver));
              costs.push(performance.eventLoopUtilization(before).active);
              codes.add(verdictOf(answer));
            }
            byForm.set(form, codes);
            const median = percentile(costs, 0.5);
            worst = Math.max(worst, median);
            if (median > costliest.cost) costliest = { cost: median, label: `${label} (${form})` };
          }
          verdicts.set(label, byForm);
          ledger.metric(`${label} medianMs`, round(worst));
          if (!(worst <= DEEP_BODY_MS)) {
            judgeTiming(
              ctx,
              ledger,
              `${label} costs ${round(worst)} ms of event loop (median), over ${DEEP_BODY_MS} ms`,
            );
          }
          for (const [form, codes] of byForm) {
            const seen = [...codes].join('/');
            const expected = expectedCode(kind, form, readable);
            if (codes.size > 1) ledger.wrong(`${label} (${form}): more than one verdict (${seen})`);
            else if (!codes.has(expected)) ledger.wrong(`${label} (${form}): ${seen}, not ${expected}`);
          }
          if (kind === 'replayed') {
            const all = new Set([...byForm.values()].flatMap((codes) => [...codes]));
            if (all.size > 1) ledger.wrong(`${label}: the verdict depends on the key form (${[...all].join('/')})`);
          }
          ctx.log(
            `deep-body ${pair.server}: ${label}: ${round(worst)} ms, ${[...byForm].map(([f, c]) => `${f} ${[...c].join('/')}`).join(', ')}`,
          );
        }
      }
      ledger.metric('costliest', `${costliest.label} ${round(costliest.cost)} ms`);

      // 2. Genuine deliveries every `intervalMs` on the PEM receiver, timed
      // from when each was due, while two clients send the deep bodies (every
      // shape, forged and replayed, in turn) as fast as they can.
      const { receiver } = receivers[0];
      await validUnderLoad(ctx, receiver, ledger, {
        count: Math.floor(floodMs / intervalMs),
        intervalMs,
        timeoutMs: validTimeoutMs,
        during: 'two clients send deep bodies',
        load() {
          let flooding = true;
          let floods = 0;
          const flooder = async (offset) => {
            for (let i = offset; flooding; i++) {
              const [, body] = JUDGED[i % JUDGED.length];
              await sendDeep(receiver, body, i % 2 === 0 ? 'forged' : 'replayed', captured.get(receiver));
              floods++;
            }
          };
          const flooders = [flooder(0), flooder(1)];
          return async () => {
            flooding = false;
            await Promise.all(flooders);
            ledger.metric('deepBodiesFlooded', floods);
          };
        },
      });
    } finally {
      await Promise.all(receivers.map(({ receiver }) => receiver.close()));
    }
  },
};
