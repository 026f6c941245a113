/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(secret, raw body)>` (webhooks), or the
 * same value in `Shopify-Hmac-Sha256` (the newer "events" deliveries, whose headers have no
 * `x-` prefix). Defends against forged deliveries to a tunneled URL. Not against replay: Shopify
 * signs neither a timestamp nor the webhook id, so the store's dedupe stops honest retries only
 * (`noReplayProtection`).
 */
import { checkBodySignature, hmac } from './crypto.js';
import { noReplayProtection, type Delivery, type Verifier } from './verifier.js';

const SIGNATURE = 'x-shopify-hmac-sha256';
const EVENTS_SIGNATURE = 'shopify-hmac-sha256';
/** Base64 of a 32-byte digest. */
const SIGNATURE_PATTERN = /^[A-Za-z0-9+/]{43}=$/;

const signature = (secret: string, body: Buffer) => hmac('sha256', secret, body).toString('base64');

/** A Shopify header in either spelling (`X-Shopify-Topic` for webhooks, `Shopify-Topic` for events). */
const shopifyHeader = (delivery: Pick<Delivery, 'headers'>, name: string): string | null =>
  delivery.headers[`x-shopify-${name}`] ?? delivery.headers[`shopify-${name}`] ?? null;

export const shopifyVerifier: Verifier = {
  kind: 'shopify',
  trustMode: 'signed',
  secretHeaders: [SIGNATURE, EVENTS_SIGNATURE],
  replayHeaders: [
    ...['topic', 'webhook-id', 'event-id', 'shop-domain', 'api-version', 'triggered-at', 'sub-topic', 'name'].map((name) => `x-shopify-${name}`),
    ...['topic', 'webhook-id', 'event-id', 'shop-domain', 'api-version', 'triggered-at', 'handle', 'action', 'resource-id'].map((name) => `shopify-${name}`),
  ],

  verify(delivery, { secrets }) {
    const header = delivery.headers[SIGNATURE] ?? delivery.headers[EVENTS_SIGNATURE];
    if (header === undefined) {
      return {
        ok: false,
        reason: 'signature_missing',
        hint: 'no X-Shopify-Hmac-Sha256 header: is this URL the webhook subscription of your Shopify app (or a store notification webhook)?',
      };
    }
    const given = header.trim();
    if (!SIGNATURE_PATTERN.test(given)) {
      return { ok: false, reason: 'signature_malformed', hint: 'X-Shopify-Hmac-Sha256 is not a base64 SHA-256 digest (44 characters ending in "=")' };
    }
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given: [given],
      sign: signature,
      what: 'X-Shopify-Hmac-Sha256',
      advice: "app webhooks are signed with the app's client secret; webhooks created under Settings → Notifications with the key shown there",
    });
    if ('reason' in check) return check;
    return { ok: true, detail: `shopify: X-Shopify-Hmac-Sha256 verified with secret #${check.matched + 1}; ${noReplayProtection('Shopify', 'X-Shopify-Webhook-Id')}` };
  },

  describe(delivery) {
    return {
      eventType: shopifyHeader(delivery, 'topic'),
      // The webhook id is the same on every retry of one delivery; the event id is shared by all
      // subscriptions an event fans out to, so it is only the fallback.
      externalId: shopifyHeader(delivery, 'webhook-id') ?? shopifyHeader(delivery, 'event-id'),
    };
  },

  sign({ body, secret, headers }) {
    // Answer in the spelling of the original, since Shopify's own validator picks the header
    // family (webhooks vs events) from which HMAC header is present.
    const eventsStyle = headers['x-shopify-topic'] === undefined && headers['shopify-topic'] !== undefined;
    return { [eventsStyle ? EVENTS_SIGNATURE : SIGNATURE]: signature(secret, body) };
  },
};
