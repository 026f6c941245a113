/**
 * Standard Webhooks (Svix, Clerk, Resend, …): `webhook-signature: v1,<base64 HMAC-SHA256(key,
 * "<webhook-id>.<webhook-timestamp>.<body>")> [v1,<…> …]`, where the key is the base64 after
 * `whsec_`. Svix-branded senders use the same scheme under `svix-id` / `svix-timestamp` /
 * `svix-signature`. Defends against forgery (HMAC over id, time and body) and against replaying
 * a captured delivery (timestamp within the tolerance, both directions); several signatures may
 * be listed while the sender rolls its secret.
 */
import { randomUUID } from 'node:crypto';
import { checkBodySignature, checkSkew, hmac, parseJson, skewSeconds, stringField } from './crypto.js';
import type { Delivery, Verifier } from './verifier.js';

const SECRET_PREFIX = 'whsec_';
/** Base64 of a 32-byte digest. */
const V1_PATTERN = /^[A-Za-z0-9+/]{43}=$/;

interface Envelope {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  /** Which header family the sender used; a replay answers in the same one. */
  branded: boolean;
}

function envelope(headers: Readonly<Record<string, string>>): Envelope {
  // Svix-branded only when no unbranded header is there at all (a replay has only the id left).
  const branded =
    !['id', 'timestamp', 'signature'].some((name) => headers[`webhook-${name}`] !== undefined) &&
    ['id', 'timestamp', 'signature'].some((name) => headers[`svix-${name}`] !== undefined);
  const prefix = branded ? 'svix' : 'webhook';
  return {
    id: headers[`${prefix}-id`],
    timestamp: headers[`${prefix}-timestamp`],
    signature: headers[`${prefix}-signature`],
    branded,
  };
}

/** The signing key: the base64 after `whsec_` (a bare base64 key is accepted too, as the libraries do). */
const signingKey = (secret: string) => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

const v1 = (secret: string, id: string, timestamp: string, body: Buffer) => hmac('sha256', signingKey(secret), `${id}.${timestamp}.`, body).toString('base64');

export const standardWebhooksVerifier: Verifier = {
  kind: 'standard-webhooks',
  trustMode: 'signed',
  secretHeaders: ['webhook-signature', 'svix-signature'],
  // The timestamps are not kept: without their signature they mean nothing, and sign() sends fresh ones.
  replayHeaders: ['webhook-id', 'svix-id'],
  defaultToleranceS: 300,

  verify(delivery: Delivery, { secrets, toleranceS }) {
    const { id, timestamp, signature, branded } = envelope(delivery.headers);
    const names = branded ? 'svix-id / svix-timestamp / svix-signature' : 'webhook-id / webhook-timestamp / webhook-signature';
    if (signature === undefined) {
      return {
        ok: false,
        reason: 'signature_missing',
        hint: 'no webhook-signature (or svix-signature) header: is this URL registered as the endpoint at the sender (Svix, Clerk, Resend, …)?',
      };
    }
    if (timestamp === undefined) return { ok: false, reason: 'timestamp_missing', hint: `no timestamp header (expected ${names})` };
    if (id === undefined || id === '') {
      return { ok: false, reason: 'signature_malformed', hint: `no message id header: the signature covers it (expected ${names})` };
    }
    if (!/^\d+$/.test(timestamp)) {
      return { ok: false, reason: 'signature_malformed', hint: 'the webhook timestamp header is not an integer number of seconds' };
    }
    const entries = signature.trim().split(/\s+/).map((entry) => {
      const comma = entry.indexOf(',');
      return comma < 0 ? { version: entry, value: '' } : { version: entry.slice(0, comma), value: entry.slice(comma + 1) };
    });
    const given = entries.filter((entry) => entry.version === 'v1' && V1_PATTERN.test(entry.value)).map((entry) => entry.value);
    if (given.length === 0) {
      const asymmetric = entries.some((entry) => entry.version === 'v1a');
      return {
        ok: false,
        reason: 'signature_malformed',
        hint: asymmetric
          ? 'only v1a (asymmetric, Ed25519) signatures were sent; switchboard checks v1 (symmetric whsec_ secrets)'
          : 'the signature header has no "v1,<base64>" entry (a space-separated list is expected)',
      };
    }
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given,
      sign: (secret, body) => v1(secret, id, timestamp, body),
      what: 'the v1 signature',
      advice: 'each endpoint has its own whsec_… signing secret; copy the whole value, prefix included',
    });
    if ('reason' in check) return check;
    const skew = skewSeconds(Number(timestamp), delivery.nowMs);
    return (
      checkSkew(skew, toleranceS) ?? { ok: true, detail: `standard-webhooks: v1 signature verified with secret #${check.matched + 1}, timestamp skew ${skew} s` }
    );
  },

  describe(delivery) {
    return { eventType: stringField(parseJson(delivery.rawBody), 'type'), externalId: envelope(delivery.headers).id ?? null };
  },

  sign({ body, secret, nowMs, headers }) {
    const { id, branded } = envelope(headers);
    // The id is part of what is signed; a delivery stored without one (impossible once verified)
    // gets a fresh one rather than an unverifiable signature.
    const messageId = id ?? `msg_${randomUUID()}`;
    const timestamp = String(Math.floor(nowMs / 1000));
    const prefix = branded ? 'svix' : 'webhook';
    return {
      [`${prefix}-id`]: messageId,
      [`${prefix}-timestamp`]: timestamp,
      [`${prefix}-signature`]: `v1,${v1(secret, messageId, timestamp, body)}`,
    };
  },
};
