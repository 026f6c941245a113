/**
 * Linear: `Linear-Signature: <hex HMAC-SHA256(secret, raw body)>`; the body carries
 * `webhookTimestamp` (ms). Defends against forgery (HMAC) and against replaying a captured
 * delivery (the signed `webhookTimestamp` within the tolerance, both directions; Linear's own
 * SDK allows one minute, hence the default). Within that window a capture re-sent under a new
 * Linear-Delivery (unsigned) is a new event, and verify_detail says so. The timestamp lives inside the signed body, so a
 * replay that must pass the consumer's check rewrites it (`refreshBody`) before signing.
 */
import { checkBodySignature, checkSkew, hmac, parseJson, stringField } from './crypto.js';
import type { Verifier } from './verifier.js';

const SIGNATURE = 'linear-signature';
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;
/** `"webhookTimestamp": 1712345678901` as Linear writes it (top level, a JSON number). */
const TIMESTAMP_FIELD = /("webhookTimestamp"\s*:\s*)(\d+)/;

const signature = (secret: string, body: Buffer) => hmac('sha256', secret, body).toString('hex');

function webhookTimestampMs(body: unknown): number | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const value = (body as Record<string, unknown>).webhookTimestamp;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export const linearVerifier: Verifier = {
  kind: 'linear',
  trustMode: 'signed',
  secretHeaders: [SIGNATURE],
  replayHeaders: ['linear-delivery', 'linear-event'],
  defaultToleranceS: 60,

  verify(delivery, { secrets, toleranceS }) {
    const header = delivery.headers[SIGNATURE];
    if (header === undefined) {
      return { ok: false, reason: 'signature_missing', hint: 'no Linear-Signature header: is this URL the one set under Settings → API → Webhooks in Linear?' };
    }
    const given = header.trim().toLowerCase();
    if (!SIGNATURE_PATTERN.test(given)) {
      return { ok: false, reason: 'signature_malformed', hint: 'Linear-Signature is not a hex SHA-256 digest (64 hex digits)' };
    }
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given: [given],
      sign: signature,
      what: 'Linear-Signature',
      advice: "each Linear webhook has its own signing secret, shown on the webhook's page",
    });
    if ('reason' in check) return check;
    const timestampMs = webhookTimestampMs(parseJson(delivery.rawBody));
    if (timestampMs === undefined) {
      return { ok: false, reason: 'timestamp_missing', hint: 'the signed body has no numeric webhookTimestamp, so it cannot be told apart from a replayed capture' };
    }
    const skew = Math.round((timestampMs - delivery.nowMs) / 1000);
    // The signed time bounds a replay, but the dedupe id (Linear-Delivery) is an unsigned header.
    const note = `replay window only: within ±${toleranceS} s a captured delivery re-sent with a new Linear-Delivery is a new verified event`;
    return checkSkew(skew, toleranceS) ?? { ok: true, detail: `linear: Linear-Signature verified with secret #${check.matched + 1}, webhookTimestamp skew ${skew} s; ${note}` };
  },

  describe(delivery) {
    const body = parseJson(delivery.rawBody);
    const type = stringField(body, 'type') ?? delivery.headers['linear-event'] ?? null;
    const action = stringField(body, 'action');
    return { eventType: type && action ? `${type}.${action}` : type, externalId: delivery.headers['linear-delivery'] ?? null };
  },

  refreshBody(body, nowMs) {
    // Replace the digits in place rather than re-serializing: every other byte stays as stored.
    const text = body.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(body)) return body; // not UTF-8: leave it alone
    const now = Math.floor(nowMs);
    const refreshed = Buffer.from(text.replace(TIMESTAMP_FIELD, `$1${now}`), 'utf8');
    // Only if what changed is the top-level field (not a look-alike nested somewhere).
    return webhookTimestampMs(parseJson(refreshed)) === now ? refreshed : body;
  },

  sign({ body, secret }) {
    return { [SIGNATURE]: signature(secret, body) };
  },
};
