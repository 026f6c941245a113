import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';

/**
 * The developer's handler that suites are for: a real HTTP server that checks every delivery
 * with the providers' own SDKs (Stripe's constructEvent, GitHub's webhooks-methods verify), so
 * a case that is not re-signed — or re-signed wrongly — is refused here, not by our own code.
 *
 *   POST /stripe   200 {"received": true, "ts": <ms>, "request_id": <uuid>, "type", "amount"}; 400 unsigned
 *   POST /github   202 {"ok": true, "event", "at": <ISO time>}; 401 unsigned
 *   POST /text     200 text/plain "thanks #<n>" (not JSON, different every time)
 *   POST /big      200 a JSON body of ~70 KB (over the 64 KiB a suite keeps)
 *   POST /many     200 {"f0": …, "f59": …}: another answer entirely
 * `behaviour` changes answers mid-test, as a code change would; with `rejectRepeats` /stripe and
 * /github answer 409 to a delivery they already took (the Stripe event id, the X-GitHub-Delivery
 * id): a handler that is not idempotent.
 */

export const STRIPE_SECRET = 'whsec_suites_0123456789abcdefghijklmnop';
export const GITHUB_SECRET = "It's a Secret to Everybody";

const stripe = new Stripe('sk_test_unused');

export interface HandlerBehaviour {
  /** Multiplies the Stripe amount answered: 2 is a regression. */
  amountFactor: number;
  /** Event types the handler never answers. */
  hangOn: Set<string>;
  /** Appended to /big's body: a change beyond the first 64 KiB. */
  bigSuffix: string;
  /** /text answers the same text every time. */
  stableText: boolean;
  /** Every answer waits this long (a slow handler: a run's progress shows). */
  delayMs: number;
  /** A delivery seen before (same event id / delivery id) gets 409. */
  rejectRepeats: boolean;
}

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  verified: boolean;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** What the handler answered (set as it answers). */
  status?: number;
}

export interface Handler {
  url(path: string): string;
  received: Received[];
  behaviour: HandlerBehaviour;
  reset(): void;
  close(): Promise<void>;
}

export async function startHandler(): Promise<Handler> {
  const sockets = new Set<Socket>();
  let texts = 0;
  let seen = new Set<string>();
  const handler: Handler = {
    url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received: [],
    behaviour: fresh(),
    reset() {
      handler.received = [];
      handler.behaviour = fresh();
      seen = new Set();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void setTimeout(() => void route(req, res, Buffer.concat(chunks)), handler.behaviour.delayMs));
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function route(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
    const path = req.url ?? '';
    const record: Received = { path, headers, body, verified: false, at: Date.now() };
    handler.received.push(record);
    const json = (status: number, value: unknown) => {
      record.status = status;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/stripe') {
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(body, headers['stripe-signature'] ?? '', STRIPE_SECRET);
      } catch (error) {
        return json(400, { error: `stripe signature: ${(error as Error).message.slice(0, 60)}` });
      }
      record.verified = true;
      if (handler.behaviour.hangOn.has(event.type)) return; // never answers
      if (repeated(`stripe:${event.id}`)) return json(409, { error: `event ${event.id} was already processed` });
      const amount = (event.data.object as { amount?: number }).amount ?? 0;
      return json(200, { received: true, ts: Date.now() + Math.random(), request_id: randomUUID(), type: event.type, amount: amount * handler.behaviour.amountFactor });
    }
    if (path === '/github') {
      const signature = headers['x-hub-signature-256'] ?? '';
      if (!signature || !(await githubVerify(GITHUB_SECRET, body.toString('utf8'), signature))) return json(401, { error: 'bad signature' });
      record.verified = true;
      if (repeated(`github:${headers['x-github-delivery']}`)) return json(409, { error: 'delivery already processed' });
      return json(202, { ok: true, event: headers['x-github-event'], at: new Date().toISOString() });
    }
    if (path === '/text') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end(handler.behaviour.stableText ? 'thanks' : `thanks #${++texts}`);
    }
    if (path === '/big') {
      return json(200, { rows: Array.from({ length: 1400 }, (_, i) => ({ i, text: 'x'.repeat(40) })), tail: handler.behaviour.bigSuffix });
    }
    if (path === '/many') return json(200, Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, i])));
    json(404, { error: 'no route' });
  }

  function repeated(key: string): boolean {
    const again = seen.has(key);
    seen.add(key);
    return again && handler.behaviour.rejectRepeats;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return handler;
}

function fresh(): HandlerBehaviour {
  return { amountFactor: 1, hangOn: new Set(), bigSuffix: '', stableText: false, delayMs: 0, rejectRepeats: false };
}

/** A Stripe delivery signed by Stripe's own library. */
export function stripeDelivery(type: string, amount: number): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ id: `evt_${randomUUID().replaceAll('-', '').slice(0, 24)}`, object: 'event', type, data: { object: { amount } } });
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }) } };
}

/** A GitHub delivery signed by GitHub's own library. */
export async function githubDelivery(event: string, payload: unknown): Promise<{ body: string; headers: Record<string, string> }> {
  const body = JSON.stringify(payload);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': await githubSign(GITHUB_SECRET, body),
    },
  };
}
