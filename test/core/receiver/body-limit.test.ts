import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';

const LIMIT = 1024;
let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({ receiver: { max_body_bytes: LIMIT }, providers: [{ name: 'tiny', kind: 'open' }] });
});
afterAll(() => t?.close());

function chunked(chunks: Buffer[]): Promise<{ status: number; body: string }> {
  const url = new URL(`${t.sb.url.receiver}/webhooks/tiny`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    let i = 0;
    const writeNext = () => {
      if (i >= chunks.length) return req.end();
      req.write(chunks[i++], () => setImmediate(writeNext));
    };
    writeNext();
  });
}

it('answers 413 on a declared Content-Length over the limit and records the rejection', async () => {
  const answer = await t.deliver('/webhooks/tiny', Buffer.alloc(LIMIT + 1, 0x61));
  expect(answer.status).toBe(413);
  expect(answer.json).toMatchObject({ error: 'body_too_large', hint: expect.stringContaining('max_body_bytes') });
  const rejection = (await t.sb.store.listRejections({ provider: 'tiny', limit: 1 })).items[0];
  expect(rejection).toMatchObject({ reason: 'body_too_large', body_size: LIMIT + 1 });
});

it('answers 413 on a chunked body once it passes the limit', async () => {
  const answer = await chunked(Array.from({ length: 8 }, () => Buffer.alloc(512, 0x62)));
  expect(answer.status).toBe(413);
  expect((await t.sb.store.listRejections({ provider: 'tiny', limit: 1 })).items[0]!.body_size).toBeGreaterThan(LIMIT);
});

it('accepts a body of exactly the limit, and an empty one', async () => {
  expect((await t.deliver('/webhooks/tiny', Buffer.alloc(LIMIT, 0x63))).status).toBe(200);
  expect((await chunked([Buffer.alloc(LIMIT / 2), Buffer.alloc(LIMIT / 2)])).status).toBe(200);
  expect((await t.deliver('/webhooks/tiny', '')).status).toBe(200);
});

it('answers 503 storage_unavailable when the store cannot commit, and stores nothing', async () => {
  await t.sb.store.close();
  const answer = await t.deliver('/webhooks/tiny', '{"during":"outage"}');
  expect(answer.status).toBe(503);
  expect(answer.json).toMatchObject({ error: 'storage_unavailable', hint: expect.stringMatching(/retry/) });
});
