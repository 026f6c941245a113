/**
 * Stripe: `Stripe-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "t.body")>[,v1=…]`.
 * Defends against forgery (HMAC) and replay of a captured delivery (timestamp within the
 * tolerance, both directions). Several v1 values may be present while Stripe rolls a secret.
 */
import { checkBodySignature, checkSkew, hmac, parseJson, parseSignatureList, skewSeconds, stringField } from './crypto.js';
import type { Verifier } from './verifier.js';

const HEADER = 'stripe-signature';

const v1 = (secret: string, timestamp: string, body: Buffer) => hmac('sha256', secret, `${timestamp}.`, body).toString('hex');

export const stripeVerifier: Verifier = {
  kind: 'stripe',
  trustMode: 'signed',
  secretHeaders: [HEADER],
  replayHeaders: [],
  defaultToleranceS: 300,

  verify(delivery, { secrets, toleranceS }) {
    const header = delivery.headers[HEADER];
    if (header === undefined) {
      return { ok: false, reason: 'signature_missing', hint: 'no Stripe-Signature header: is this endpoint registered in Stripe (or `stripe listen`) with this URL?' };
    }
    const parts = parseSignatureList(header, ',');
    const timestamp = parts.get('t')?.[0];
    const signatures = (parts.get('v1') ?? []).map((value) => value.toLowerCase());
    if (timestamp === undefined || !/^\d+$/.test(timestamp)) {
      return { ok: false, reason: 'signature_malformed', hint: 'Stripe-Signature has no t=<unix seconds> element' };
    }
    if (signatures.length === 0) {
      return { ok: false, reason: 'signature_malformed', hint: 'Stripe-Signature has no v1= signature (only v1 is checked; v0 is for test mode legacy)' };
    }
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given: signatures,
      sign: (secret, body) => v1(secret, timestamp, body),
      what: 'Stripe-Signature v1',
      advice: 'each endpoint and each `stripe listen` session has its own whsec_ secret',
    });
    if ('reason' in check) return check;
    const skew = skewSeconds(Number(timestamp), delivery.nowMs);
    return checkSkew(skew, toleranceS) ?? { ok: true, detail: `stripe: v1 signature verified with secret #${check.matched + 1}, timestamp skew ${skew} s` };
  },

  describe(delivery) {
    const body = parseJson(delivery.rawBody);
    return { eventType: stringField(body, 'type'), externalId: stringField(body, 'id') };
  },

  sign({ body, secret, nowMs }) {
    const timestamp = String(Math.floor(nowMs / 1000));
    return { 'stripe-signature': `t=${timestamp},v1=${v1(secret, timestamp, body)}` };
  },
};
