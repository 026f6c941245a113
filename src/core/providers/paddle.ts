/**
 * Paddle Billing: `Paddle-Signature: ts=<unix s>;h1=<hex HMAC-SHA256(secret, "<ts>:<body>")>`,
 * with several h1 while a secret is being rotated. Defends against forgery (HMAC over time and
 * body) and against replaying a captured delivery (timestamp within the tolerance, both
 * directions).
 */
import { checkBodySignature, checkSkew, hmac, parseJson, parseSignatureList, skewSeconds, stringField } from './crypto.js';
import type { Verifier } from './verifier.js';

const HEADER = 'paddle-signature';
const H1_PATTERN = /^[0-9a-f]{64}$/;

const h1 = (secret: string, timestamp: string, body: Buffer) => hmac('sha256', secret, `${timestamp}:`, body).toString('hex');

export const paddleVerifier: Verifier = {
  kind: 'paddle',
  trustMode: 'signed',
  secretHeaders: [HEADER],
  replayHeaders: [],
  defaultToleranceS: 300,

  verify(delivery, { secrets, toleranceS }) {
    const header = delivery.headers[HEADER];
    if (header === undefined) {
      return { ok: false, reason: 'signature_missing', hint: 'no Paddle-Signature header: is this URL a notification destination in Paddle (Developer tools → Notifications)?' };
    }
    const parts = parseSignatureList(header, ';');
    const timestamp = parts.get('ts')?.[0];
    const given = (parts.get('h1') ?? []).map((value) => value.toLowerCase()).filter((value) => H1_PATTERN.test(value));
    if (timestamp === undefined || !/^\d+$/.test(timestamp)) {
      return { ok: false, reason: 'signature_malformed', hint: 'Paddle-Signature has no ts=<unix seconds> element' };
    }
    if (given.length === 0) {
      return { ok: false, reason: 'signature_malformed', hint: 'Paddle-Signature has no h1=<64 hex digits> element' };
    }
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given,
      sign: (secret, body) => h1(secret, timestamp, body),
      what: 'Paddle-Signature h1',
      advice: 'each notification destination has its own pdl_ntfset_… secret key; sandbox and live differ',
    });
    if ('reason' in check) return check;
    const skew = skewSeconds(Number(timestamp), delivery.nowMs);
    return checkSkew(skew, toleranceS) ?? { ok: true, detail: `paddle: h1 signature verified with secret #${check.matched + 1}, timestamp skew ${skew} s` };
  },

  describe(delivery) {
    const body = parseJson(delivery.rawBody);
    return { eventType: stringField(body, 'event_type'), externalId: stringField(body, 'event_id') };
  },

  sign({ body, secret, nowMs }) {
    const timestamp = String(Math.floor(nowMs / 1000));
    return { [HEADER]: `ts=${timestamp};h1=${h1(secret, timestamp, body)}` };
  },
};
