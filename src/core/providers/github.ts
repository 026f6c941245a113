/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>`.
 * Defends against forged deliveries to a tunneled URL. Not against replay: GitHub signs no
 * timestamp and not the delivery id (X-GitHub-Delivery), so the store's dedupe stops honest
 * redeliveries only; a capture re-sent under a new id is a new event (`noReplayProtection`).
 */
import { checkBodySignature, hmac, parseJson, stringField } from './crypto.js';
import { noReplayProtection, type Verifier } from './verifier.js';

const SIGNATURE_HEADER = 'x-hub-signature-256';
const SIGNATURE_PATTERN = /^sha256=[0-9a-f]{64}$/;

/**
 * Whether the body can hold an "action" key at all: written plainly, or with a letter escaped as
 * \u00XX (the only escape that yields a letter). Most deliveries without one (push, the most
 * common) then skip parsing the whole payload just to find nothing.
 */
const mayHaveAction = (body: Buffer) => body.includes('"action"') || body.includes('\\u00');

const signature = (secret: string, body: Buffer) => `sha256=${hmac('sha256', secret, body).toString('hex')}`;

export const githubVerifier: Verifier = {
  kind: 'github',
  trustMode: 'signed',
  secretHeaders: [SIGNATURE_HEADER, 'x-hub-signature'],
  replayHeaders: ['x-github-event', 'x-github-delivery', 'x-github-hook-id', 'x-github-hook-installation-target-id', 'x-github-hook-installation-target-type'],

  verify(delivery, { secrets }) {
    const header = delivery.headers[SIGNATURE_HEADER];
    if (header === undefined) {
      const legacy = delivery.headers['x-hub-signature'] !== undefined;
      return {
        ok: false,
        reason: 'signature_missing',
        hint: legacy
          ? 'only the legacy SHA-1 X-Hub-Signature header was sent; switchboard requires X-Hub-Signature-256 (set a secret on the GitHub webhook)'
          : 'no X-Hub-Signature-256 header: set a secret in the GitHub webhook settings (and make sure the request really comes from GitHub)',
      };
    }
    const given = header.trim().toLowerCase();
    if (!SIGNATURE_PATTERN.test(given)) {
      return { ok: false, reason: 'signature_malformed', hint: 'X-Hub-Signature-256 is not of the form sha256=<64 hex digits>' };
    }
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given: [given],
      sign: signature,
      what: 'X-Hub-Signature-256',
      advice: "the secret is set per webhook under the repository's or organization's Settings → Webhooks",
    });
    if ('reason' in check) return check;
    return { ok: true, detail: `github: X-Hub-Signature-256 verified with secret #${check.matched + 1}; ${noReplayProtection('GitHub', 'X-GitHub-Delivery')}` };
  },

  describe(delivery) {
    const event = delivery.headers['x-github-event'] ?? null;
    const action = mayHaveAction(delivery.rawBody) ? stringField(parseJson(delivery.rawBody), 'action') : null;
    return {
      eventType: event && action ? `${event}.${action}` : event,
      externalId: delivery.headers['x-github-delivery'] ?? null,
    };
  },

  sign({ body, secret }) {
    return {
      'x-hub-signature-256': signature(secret, body),
      'x-hub-signature': `sha1=${hmac('sha1', secret, body).toString('hex')}`,
    };
  },
};
