/**
 * Twilio: `X-Twilio-Signature: <base64 HMAC-SHA1(auth token, URL + sorted POST params)>`, where
 * the URL is the full public URL Twilio called (hence `receiver.public_url`) and each param is
 * its name followed by its value. JSON deliveries instead carry `?bodySHA256=<hex SHA-256 of the
 * body>` in the (signed) URL with no params. Webhooks signed with a SharedKey name their
 * algorithm (HMAC_SHA1 or HMAC_SHA256) in `X-Twilio-Webhooks-Signature-Settings`.
 * Defends against forged callbacks to a tunneled URL. Not against replay: Twilio signs no
 * timestamp, and deduplication uses its idempotency token (an unsigned header), else sid +
 * status, so a capture re-sent with a new token is a new event (`noReplayProtection`).
 */
import { createHash } from 'node:crypto';
import { hmac, matchingSecret, mismatchHint, parseJson, RESERIALIZED_HINT, reserializations, safeEqual, stringField } from './crypto.js';
import { noReplayProtection, type Verifier } from './verifier.js';

const SIGNATURE = 'x-twilio-signature';
const SETTINGS = 'x-twilio-webhooks-signature-settings';
const IDEMPOTENCY = 'i-twilio-idempotency-token';
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

type Algorithm = 'sha1' | 'sha256';

/** The algorithm a settings header names; absent (the Auth Token scheme) means HMAC-SHA1. */
function algorithmOf(settings: string | undefined): Algorithm | null {
  const named = settings
    ?.split(',')
    .map((part) => part.split('='))
    .find(([key]) => key?.trim() === 'algorithm')?.[1]
    ?.trim()
    .toUpperCase();
  if (named === undefined || named === '' || named === 'HMAC_SHA1') return 'sha1';
  return named === 'HMAC_SHA256' ? 'sha256' : null;
}

/** POST params as Twilio's libraries see them: repeated names keep every distinct value. */
function formParams(body: Buffer): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}

/**
 * What follows the URL in the signed string: each param name (sorted) followed by its value(s)
 * (distinct, sorted). Built once per delivery, however many secrets and URL spellings are tried.
 */
function signedParamsText(params: Map<string, string[]>): Buffer {
  const parts: string[] = [];
  for (const name of [...params.keys()].sort()) {
    for (const value of [...new Set(params.get(name))].sort()) parts.push(name, value);
  }
  return Buffer.from(parts.join(''), 'utf8');
}

const signature = (algorithm: Algorithm, secret: string, url: string, params: Buffer) => hmac(algorithm, secret, url, params).toString('base64');

/**
 * The URL as configured at Twilio may or may not spell the default port; Twilio's own
 * validator tries both, and so do we.
 */
function urlVariants(url: string): string[] {
  const parsed = new URL(url);
  const defaultPort = parsed.protocol === 'https:' ? '443' : '80';
  const rest = `${parsed.pathname}${parsed.search}`;
  const variants = new Set([url, `${parsed.protocol}//${parsed.hostname}${rest}`]);
  if (parsed.port === '') variants.add(`${parsed.protocol}//${parsed.hostname}:${defaultPort}${rest}`);
  return [...variants];
}

const bodyHash = (body: Buffer) => createHash('sha256').update(body).digest('hex');

/** What the signature covers: the POST params, or none when the URL carries the body hash. */
const signedParams = (query: URLSearchParams, body: Buffer) => signedParamsText(query.has('bodySHA256') ? new Map<string, string[]>() : formParams(body));

const SETUP_HINT =
  'Twilio signs the exact URL it calls: set receiver.public_url in config.json to the public base URL of your tunnel (e.g. "https://abc.ngrok.app"), the same one used in the webhook URL configured at Twilio';

export const twilioVerifier: Verifier = {
  kind: 'twilio',
  trustMode: 'signed',
  secretHeaders: [SIGNATURE, SETTINGS],
  replayHeaders: [IDEMPOTENCY],

  verify(delivery, { secrets }) {
    const header = delivery.headers[SIGNATURE];
    if (header === undefined) {
      return { ok: false, reason: 'signature_missing', hint: 'no X-Twilio-Signature header: is this URL set as the webhook / status callback URL in Twilio?' };
    }
    const given = header.trim();
    const algorithm = algorithmOf(delivery.headers[SETTINGS]);
    if (algorithm === null) {
      return { ok: false, reason: 'signature_malformed', hint: 'X-Twilio-Webhooks-Signature-Settings names an algorithm other than HMAC_SHA1 or HMAC_SHA256' };
    }
    if (!BASE64_PATTERN.test(given) || Buffer.from(given, 'base64').length !== (algorithm === 'sha1' ? 20 : 32)) {
      return { ok: false, reason: 'signature_malformed', hint: `X-Twilio-Signature is not a base64 HMAC-${algorithm.toUpperCase()} digest` };
    }
    const url = delivery.publicUrl;
    if (url === null) return { ok: false, reason: 'public_url_not_configured', hint: SETUP_HINT };

    const params = signedParams(delivery.query, delivery.rawBody);
    const matchesAt = (candidate: string, secret: string) => urlVariants(candidate).some((variant) => safeEqual(signature(algorithm, secret, variant, params), given));
    const matched = matchingSecret(secrets, (secret) => matchesAt(url, secret));
    if (matched < 0) {
      // The commonest cause is the URL, not the token: a tunnel serving https while public_url says http.
      const swapped = url.startsWith('https:') ? url.replace(/^https:/, 'http:') : url.replace(/^http:/, 'https:');
      if (secrets.some((secret) => matchesAt(swapped, secret))) {
        return {
          ok: false,
          reason: 'signature_mismatch',
          hint: `Twilio signed ${swapped.split(':')[0]}:// but receiver.public_url says ${url.split(':')[0]}://: fix the scheme of receiver.public_url`,
        };
      }
      return {
        ok: false,
        reason: 'signature_mismatch',
        hint:
          mismatchHint('X-Twilio-Signature', secrets.length) +
          ` (the Auth Token from the Twilio Console), or the URL Twilio called is not ${url} (receiver.public_url + path must be exactly the webhook URL configured at Twilio, query string included)`,
      };
    }

    const declaredHash = delivery.query.get('bodySHA256');
    if (declaredHash !== null && !safeEqual(bodyHash(delivery.rawBody), declaredHash.toLowerCase())) {
      const reserialized = reserializations(delivery.rawBody).some((body) => safeEqual(bodyHash(body), declaredHash.toLowerCase()));
      return {
        ok: false,
        reason: 'signature_mismatch',
        hint: reserialized ? RESERIALIZED_HINT : 'the URL signature is valid but the body does not match its bodySHA256: the body was altered on the way',
      };
    }
    const scheme = algorithm === 'sha1' ? 'HMAC-SHA1' : 'HMAC-SHA256';
    return { ok: true, detail: `twilio: X-Twilio-Signature (${scheme}${declaredHash !== null ? ', bodySHA256' : ''}) verified with secret #${matched + 1}; ${noReplayProtection('Twilio', 'I-Twilio-Idempotency-Token')}` };
  },

  describe(delivery) {
    const idempotency = delivery.headers[IDEMPOTENCY] ?? null;
    if (delivery.query.has('bodySHA256') || (delivery.headers['content-type'] ?? '').startsWith('application/json')) {
      // JSON deliveries (Event Streams and the like) are CloudEvents: one or a batch.
      const body = parseJson(delivery.rawBody);
      const events = Array.isArray(body) ? body : [body];
      return {
        eventType: stringField(events[0], 'type'),
        externalId: idempotency ?? (events.length === 1 ? stringField(events[0], 'id') : null),
      };
    }
    const form = new URLSearchParams(delivery.rawBody.toString('utf8'));
    const get = (name: string) => {
      const value = form.get(name);
      return value === null || value === '' ? null : value;
    };
    // A status callback reuses its resource's sid for every status, so the dedupe key is sid +
    // status: a redelivered "delivered" dedupes, "sent" then "delivered" are two events.
    const lifecycle = (kind: string, sid: string | null, status: string | null, extra = '') => ({
      eventType: status ? `${kind}.${status}` : kind,
      externalId: idempotency ?? (sid && status ? `${sid}:${status}${extra}` : null),
    });
    if (get('RecordingStatus')) return lifecycle('recording', get('RecordingSid'), get('RecordingStatus'));
    if (get('TranscriptionStatus')) return lifecycle('transcription', get('TranscriptionSid'), get('TranscriptionStatus'));
    const messageStatus = get('MessageStatus') ?? get('SmsStatus');
    if (messageStatus) return lifecycle('message', get('MessageSid') ?? get('SmsSid'), messageStatus);
    const callStatus = get('CallStatus');
    if (callStatus) {
      // Only call-progress status callbacks are one-per-status; the voice URL and <Gather>
      // actions of one call also carry its CallSid and status, and must never dedupe.
      const progress = get('CallbackSource') === 'call-progress-events';
      const sequence = get('SequenceNumber');
      return lifecycle('call', progress ? get('CallSid') : null, callStatus, sequence ? `:${sequence}` : '');
    }
    return { eventType: get('EventType'), externalId: idempotency };
  },

  sign({ body, secret, publicUrl }): Record<string, string> {
    // The consumer checks against the URL it is reached at, which is the replay target.
    if (publicUrl === null) return {};
    // Always the Auth Token scheme (HMAC-SHA1, no settings header): a SharedKey delivery's
    // settings header is stored redacted (its name says "signature"), and the Auth Token is
    // what a consumer's twilio.webhook() checks by default.
    return { [SIGNATURE]: signature('sha1', secret, publicUrl, signedParams(new URL(publicUrl).searchParams, body)) };
  },
};
