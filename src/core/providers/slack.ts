/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:<ts>:<body>")>` with
 * `X-Slack-Request-Timestamp`. Defends against forgery and against replaying a captured
 * request (timestamp within 300 s, both directions). Bodies are JSON (Events API) or
 * form-encoded (slash commands, interactivity with a `payload` field).
 */
import { checkBodySignature, checkSkew, hmac, parseJson, skewSeconds, stringField } from './crypto.js';
import type { Delivery, Verifier } from './verifier.js';

const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';

const v0 = (secret: string, timestamp: string, body: Buffer) => `v0=${hmac('sha256', secret, `v0:${timestamp}:`, body).toString('hex')}`;

/** The JSON a Slack delivery carries, whether sent as JSON or inside a form's `payload` field. */
function slackBody(delivery: Delivery): { json: unknown; form: URLSearchParams | null } {
  const contentType = delivery.headers['content-type'] ?? '';
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(delivery.rawBody.toString('utf8'));
    const payload = form.get('payload');
    return { json: payload === null ? undefined : parseJson(Buffer.from(payload)), form };
  }
  return { json: parseJson(delivery.rawBody), form: null };
}

export const slackVerifier: Verifier = {
  kind: 'slack',
  trustMode: 'signed',
  secretHeaders: [SIGNATURE],
  replayHeaders: ['x-slack-retry-num', 'x-slack-retry-reason'],
  defaultToleranceS: 300,

  verify(delivery, { secrets, toleranceS }) {
    const given = delivery.headers[SIGNATURE];
    const timestamp = delivery.headers[TIMESTAMP];
    if (given === undefined) {
      return { ok: false, reason: 'signature_missing', hint: 'no X-Slack-Signature header: Slack signs every request; is this URL registered in the Slack app settings?' };
    }
    if (timestamp === undefined) {
      return { ok: false, reason: 'timestamp_missing', hint: 'no X-Slack-Request-Timestamp header' };
    }
    if (!/^\d+$/.test(timestamp) || !/^v0=[0-9a-f]{64}$/i.test(given.trim())) {
      return { ok: false, reason: 'signature_malformed', hint: 'X-Slack-Signature must be v0=<64 hex digits> with a numeric X-Slack-Request-Timestamp' };
    }
    const normalized = given.trim().toLowerCase();
    const check = checkBodySignature({
      secrets,
      rawBody: delivery.rawBody,
      given: [normalized],
      sign: (secret, body) => v0(secret, timestamp, body),
      what: 'X-Slack-Signature',
      advice: "use the app's Signing Secret (Basic Information), not its verification token",
    });
    if ('reason' in check) return check;
    const skew = skewSeconds(Number(timestamp), delivery.nowMs);
    return checkSkew(skew, toleranceS) ?? { ok: true, detail: `slack: v0 signature verified with secret #${check.matched + 1}, timestamp skew ${skew} s` };
  },

  describe(delivery) {
    const { json, form } = slackBody(delivery);
    const command = form?.get('command');
    const eventType = stringField(json, 'event', 'type') ?? stringField(json, 'type') ?? (command ? `command ${command}` : null);
    const externalId = stringField(json, 'event_id') ?? form?.get('trigger_id') ?? stringField(json, 'trigger_id');
    return { eventType, externalId: externalId ?? null };
  },

  handshake(delivery) {
    const { json } = slackBody(delivery);
    if (stringField(json, 'type') !== 'url_verification') return null;
    return { contentType: 'application/json', body: JSON.stringify({ challenge: stringField(json, 'challenge') ?? '' }) };
  },

  sign({ body, secret, nowMs }) {
    const timestamp = String(Math.floor(nowMs / 1000));
    return { [TIMESTAMP]: timestamp, [SIGNATURE]: v0(secret, timestamp, body) };
  },
};
