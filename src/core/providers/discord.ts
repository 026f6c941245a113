/**
 * Discord (interactions endpoint and webhook events): `X-Signature-Ed25519: <hex Ed25519
 * signature of timestamp + raw body>` with `X-Signature-Timestamp`, checked against the
 * application's public key (`public_key` in config.json; there is no shared secret). Defends
 * against forged interactions (Discord itself probes the endpoint with bad signatures and
 * expects a 401) and against replaying a captured request (timestamp within the tolerance, both
 * directions). Re-signing a replay is impossible without Discord's private key, so there is no
 * `sign()`: replays of Discord events go out unsigned.
 */
import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { parseJson, RESERIALIZED_HINT, reserializations, skewHint, skewSeconds, stringField } from './crypto.js';
import type { Delivery, Verifier } from './verifier.js';

const SIGNATURE = 'x-signature-ed25519';
const TIMESTAMP = 'x-signature-timestamp';
const SIGNATURE_PATTERN = /^[0-9a-f]{128}$/;
/** DER header of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const INTERACTION_TYPES: Readonly<Record<number, string>> = {
  1: 'PING',
  2: 'APPLICATION_COMMAND',
  3: 'MESSAGE_COMPONENT',
  4: 'APPLICATION_COMMAND_AUTOCOMPLETE',
  5: 'MODAL_SUBMIT',
};

const keyCache = new Map<string, KeyObject | null>();

/** The configured hex key as a KeyObject, or null when those 32 bytes are not a usable key. */
function publicKeyObject(hex: string): KeyObject | null {
  const normalized = hex.toLowerCase();
  let key = keyCache.get(normalized);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(normalized, 'hex')]), format: 'der', type: 'spki' });
    } catch {
      key = null;
    }
    keyCache.set(normalized, key);
  }
  return key;
}

const signatureValid = (key: KeyObject, timestamp: string, body: Buffer, signature: Buffer) =>
  verifySignature(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), body]), key, signature);

const numberField = (value: unknown, key: string): number | null => {
  if (value === null || typeof value !== 'object') return null;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'number' ? field : null;
};

/**
 * Webhook events (`{"version":1,"type":0|1,"event":{…}}`) versus interactions (`{"type":1..5,
 * "id", "token", "data"}`): interactions have no type 0 and never an `event` object.
 */
function isWebhookEvent(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const event = (body as Record<string, unknown>).event;
  return numberField(body, 'type') === 0 || (event !== null && typeof event === 'object');
}

export const discordVerifier: Verifier = {
  kind: 'discord',
  trustMode: 'signed',
  secretHeaders: [SIGNATURE],
  replayHeaders: [],
  defaultToleranceS: 300,

  verify(delivery: Delivery, { publicKey, toleranceS }) {
    const header = delivery.headers[SIGNATURE];
    const timestamp = delivery.headers[TIMESTAMP];
    if (header === undefined) {
      return {
        ok: false,
        reason: 'signature_missing',
        hint: 'no X-Signature-Ed25519 header: is this URL the Interactions Endpoint URL (or Webhook Events URL) of your Discord application?',
      };
    }
    if (timestamp === undefined) return { ok: false, reason: 'timestamp_missing', hint: 'no X-Signature-Timestamp header' };
    const given = header.trim().toLowerCase();
    if (!SIGNATURE_PATTERN.test(given) || !/^\d+$/.test(timestamp)) {
      return { ok: false, reason: 'signature_malformed', hint: 'X-Signature-Ed25519 must be 128 hex digits with a numeric X-Signature-Timestamp' };
    }
    if (publicKey === undefined) {
      return { ok: false, reason: 'secret_not_configured', hint: 'set public_key (64 hex characters, from the Discord developer portal) on this provider' };
    }
    const key = publicKeyObject(publicKey);
    if (key === null) {
      return { ok: false, reason: 'signature_mismatch', hint: 'the configured public_key is not a valid Ed25519 public key: copy it again from the General Information page of the application' };
    }
    const signature = Buffer.from(given, 'hex');
    if (!signatureValid(key, timestamp, delivery.rawBody, signature)) {
      const reserialized = reserializations(delivery.rawBody).some((body) => signatureValid(key, timestamp, body, signature));
      return {
        ok: false,
        reason: 'signature_mismatch',
        hint: reserialized
          ? RESERIALIZED_HINT
          : "the Ed25519 signature does not verify with the configured public_key: copy the application's Public Key again from the developer portal (Discord also probes endpoints with deliberately bad signatures, which must be refused like this)",
      };
    }
    const skew = skewSeconds(Number(timestamp), delivery.nowMs);
    if (Math.abs(skew) > toleranceS) {
      return { ok: false, reason: 'timestamp_out_of_tolerance', hint: skewHint(skew, toleranceS) };
    }
    // Interactions carry a signed id (dedupe); webhook events carry none, so only the time bounds a replay.
    const note = isWebhookEvent(parseJson(delivery.rawBody))
      ? `; replay window only: webhook events carry no id, so within ±${toleranceS} s a captured delivery re-sent is a new verified event`
      : '';
    return { ok: true, detail: `discord: Ed25519 signature verified with the application public key, timestamp skew ${skew} s${note}` };
  },

  describe(delivery) {
    const body = parseJson(delivery.rawBody);
    const type = numberField(body, 'type');
    if (isWebhookEvent(body)) {
      // Webhook events carry no delivery id of their own.
      return { eventType: type === 0 ? 'PING' : stringField(body, 'event', 'type'), externalId: null };
    }
    const name = type === null ? null : (INTERACTION_TYPES[type] ?? `INTERACTION_${type}`);
    // A command's name, or the custom_id of the button / select / modal that was used.
    const detail = stringField(body, 'data', 'name') ?? stringField(body, 'data', 'custom_id');
    return { eventType: name && detail ? `${name} ${detail}` : name, externalId: stringField(body, 'id') };
  },

  handshake(delivery) {
    const body = parseJson(delivery.rawBody);
    // Webhook events (including their PING, type 0) must be acknowledged with 204 and no body.
    if (isWebhookEvent(body)) return { status: 204, contentType: 'text/plain', body: '' };
    // The interactions endpoint is validated with a PING that must be answered with a PONG.
    if (numberField(body, 'type') === 1) return { contentType: 'application/json', body: JSON.stringify({ type: 1 }) };
    return null;
  },
};
