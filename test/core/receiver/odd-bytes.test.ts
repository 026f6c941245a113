import { createHmac } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { sign as githubSign } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';

/**
 * DESIGN §4: odd bytes never cost a delivery. Valid signed deliveries sent at the same moment as
 * poison ones (committed in the same multi-row INSERT) are all answered 200 and stored; the
 * poison ones are stored too, with their text made storable.
 */

const STRIPE_SECRET = 'whsec_odd_bytes_0123456789abcdefghijklmnop';
const GITHUB_SECRET = 'odd-bytes-github-secret-0001';
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] },
        { name: 'github', kind: 'github', secrets: [{ value: GITHUB_SECRET }] },
      ],
      retention: { max_rejections: 100 },
    },
    // The database in a worker thread (as in Electron): a commit is in flight while the next
    // requests arrive, so concurrent deliveries share multi-row INSERTs as they do under load.
    { databaseUrl: undefined, databaseInWorker: true },
  );
});
afterAll(() => t?.close());

/**
 * Stripe's library signs text; a body that is not valid UTF-8 is signed over its exact bytes by
 * Stripe's documented scheme (HMAC-SHA256 of `t.body`), which the library's own signature matches
 * for every text body.
 */
function stripeSignature(body: string | Buffer): string {
  if (typeof body === 'string') return stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET });
  const timestamp = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', STRIPE_SECRET).update(`${timestamp}.`).update(body).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

interface Answer {
  status: number;
  text: string;
  json: any;
}

/**
 * Sends every request at the same moment: all sockets are connected first, then every request
 * is written in one go, so the receiver reads them in the same event-loop turn and the store
 * commits them in one multi-row INSERT (as a burst from a provider does).
 */
async function burst(requests: { body: string | Buffer; headers: Record<string, string> }[]): Promise<Answer[]> {
  const { port } = new URL(t.sb.url.receiver);
  const sockets = await Promise.all(
    requests.map(() => new Promise<Socket>((resolve, reject) => connect(Number(port), '127.0.0.1', function (this: Socket) { resolve(this); }).on('error', reject))),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<Answer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('end', () => {
          const raw = Buffer.concat(chunks).toString();
          const text = raw.slice(raw.indexOf('\r\n\r\n') + 4);
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: Number(raw.slice(9, 12)), text, json });
        });
      }),
  );
  requests.forEach(({ body, headers }, index) => {
    const bytes = Buffer.from(body);
    const head = Object.entries({ host: `127.0.0.1:${port}`, connection: 'close', 'content-length': String(bytes.length), ...headers })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    sockets[index]!.write(Buffer.concat([Buffer.from(`POST /webhooks/stripe HTTP/1.1\r\n${head}\r\n\r\n`, 'latin1'), bytes]));
  });
  return Promise.all(answers);
}

const stripeRequest = (body: string | Buffer, extra: Record<string, string> = {}) => ({
  body,
  headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body), ...extra },
});

describe('odd bytes in concurrent deliveries', () => {
  it('stores every valid delivery sent beside poison ones, and the poison ones made storable', async () => {
    // Written as JSON text so the escapes reach the parser as the sender wrote them.
    const poison: { body: string | Buffer; headers?: Record<string, string>; expectType?: string }[] = [
      { body: '{"id":"evt_nul_type","type":"x\\u0000"}', expectType: 'x\uFFFD' },
      { body: '{"id":"evt_lone_surrogate","type":"\\ud800 half"}', expectType: '\uFFFD half' },
      { body: `{"id":"evt_huge_type","type":"${'t'.repeat(100_000)}"}` },
      { body: `{"id":"${'i'.repeat(20_000)}","type":"huge.id"}`, expectType: 'huge.id' },
      { body: '{"id":"evt_nul\\u0000id","type":"nul.id"}', expectType: 'nul.id' },
      // Invalid UTF-8 inside the type string (signed as the exact bytes).
      { body: Buffer.concat([Buffer.from('{"id":"evt_bad_utf8","type":"bad'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]) },
      // Header bytes outside ASCII (obs-text) and a long header value.
      { body: '{"id":"evt_odd_header","type":"odd.header"}', headers: { 'x-note': '\u00ff\u00fe\u0080', 'x-long': 'h'.repeat(12_000) }, expectType: 'odd.header' },
    ];
    const valid = Array.from({ length: 140 }, (_, i) => JSON.stringify({ id: `evt_valid_${i}`, object: 'event', type: 'invoice.paid', data: { n: i } }));
    // Interleave: one poison delivery every 20 valid ones, all in flight at once.
    const sends: { kind: 'valid' | 'poison'; index: number; request: ReturnType<typeof stripeRequest> }[] = [];
    valid.forEach((body, index) => {
      sends.push({ kind: 'valid', index, request: stripeRequest(body) });
      if (index % 20 === 10) {
        const p = poison[Math.floor(index / 20)]!;
        sends.push({ kind: 'poison', index: Math.floor(index / 20), request: stripeRequest(p.body, p.headers) });
      }
    });
    // Acknowledged from the journal with its applier held, then applied together: one INSERT of
    // every row of the burst (src/core/journal), the case this test is about.
    t.sb.journal!.pauseApplier();
    let answers;
    try {
      answers = await burst(sends.map((send) => send.request));
    } finally {
      t.sb.journal!.resumeApplier();
    }
    const results = sends.map((send, i) => ({ ...send, answer: answers[i]! }));

    for (const { kind, index, answer } of results.filter((r) => r.kind === 'valid')) {
      expect(answer.status, `${kind} ${index}: ${answer.text}`).toBe(200);
      const stored = await t.sb.store.getEvent(answer.json.id);
      expect(stored).toMatchObject({ external_id: `evt_valid_${index}`, event_type: 'invoice.paid', verified: true });
    }
    for (const { index, answer } of results.filter((r) => r.kind === 'poison')) {
      expect(answer.status, `poison ${index}: ${answer.text}`).toBe(200);
      const stored = await t.sb.store.getEvent(answer.json.id);
      expect(stored!.verified).toBe(true);
      if (poison[index]!.expectType) expect(stored!.event_type).toBe(poison[index]!.expectType);
      expect(stored!.event_type!.length).toBeLessThanOrEqual(256);
      expect(stored!.external_id!.length).toBeLessThanOrEqual(512);
      expect(stored!.event_type).not.toContain('\u0000');
      // The payload itself is kept byte for byte.
      expect(Buffer.from(stored!.payload).equals(Buffer.from(poison[index]!.body))).toBe(true);
    }
    const header = results.find((r) => r.kind === 'poison' && r.index === 6)!;
    const stored = await t.sb.store.getEvent(header.answer.json.id);
    expect(stored!.headers['x-note']).toBe('\u00ff\u00fe\u0080');
    expect(stored!.headers['x-long']!.length).toBeLessThanOrEqual(8192);
  });
});

describe('rejection cap', () => {
  it('keeps forged requests with 11 KB of headers within retention.max_rejections, headers cut to 8 KB', async () => {
    const body = '{"zen":"forged"}';
    const padding = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-pad-${i}`, String(i).repeat(1024)]));
    const forged = () =>
      t.deliver('/webhooks/github', body, {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': 'forged',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
        ...padding,
      });
    let sent = 0;
    for (let wave = 0; wave < 12; wave++) {
      const answers = await Promise.all(Array.from({ length: 50 }, forged));
      for (const answer of answers) expect(answer.status).toBe(401);
      sent += answers.length;
    }
    expect(await githubSign(GITHUB_SECRET, body)).not.toBe(`sha256=${'0'.repeat(64)}`);
    const kept = (await t.sb.store.listRejections({ provider: 'github', limit: 1_000 })).items;
    expect(sent).toBe(600);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThanOrEqual(100);
    for (const rejection of kept) {
      expect(rejection.headers_truncated).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(rejection.headers))).toBeLessThanOrEqual(8 * 1024);
    }
    // The newest are the ones kept.
    expect(kept[0]!.id).toBe(Math.max(...kept.map((rejection) => rejection.id)));
  });
});
