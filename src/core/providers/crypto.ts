import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Verification } from './verifier.js';

/** Constant-time comparison of two strings; different lengths compare unequal without leaking where. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    // Still spend the time of a compare so the length is the only thing a timing attacker learns.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/**
 * Index of the first secret for which `matches` holds, or -1. Every secret is tried (no early
 * exit), so during a rotation the timing does not tell which one matched.
 */
export function matchingSecret<T>(secrets: readonly T[], matches: (secret: T) => boolean): number {
  let matched = -1;
  secrets.forEach((secret, index) => {
    if (matches(secret) && matched < 0) matched = index;
  });
  return matched;
}

/**
 * `t=1,v1=a,v1=b` (Stripe, ",") or `ts=1;h1=a;h1=b` (Paddle, ";"): each key's values in order.
 * Several values per key are how these providers sign with two secrets during a rollover.
 */
export function parseSignatureList(header: string, separator: ',' | ';'): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const part of header.split(separator)) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    values.set(key, [...(values.get(key) ?? []), part.slice(eq + 1).trim()]);
  }
  return values;
}

type Refusal = Extract<Verification, { ok: false }>;

/**
 * The check every body-signing HMAC scheme shares: which configured secret produced one of the
 * `given` signatures over the raw bytes. When none did, the refusal tells a relay that
 * re-serialized the JSON (a secret matches a re-serialized copy) apart from a wrong secret.
 * `sign(secret, body)` must return the signature in the same form as `given`.
 */
export function checkBodySignature(options: {
  secrets: readonly string[];
  rawBody: Buffer;
  given: readonly string[];
  sign: (secret: string, body: Buffer) => string;
  /** What was checked, for the hint, e.g. "Stripe-Signature v1". */
  what: string;
  /** Where this provider keeps its secret, appended to the wrong-secret hint. */
  advice: string;
}): { matched: number } | Refusal {
  const { secrets, rawBody, given, sign } = options;
  const matches = (secret: string, body: Buffer) => {
    const expected = sign(secret, body);
    return given.some((value) => safeEqual(expected, value));
  };
  const matched = matchingSecret(secrets, (secret) => matches(secret, rawBody));
  if (matched >= 0) return { matched };
  const reserialized = reserializations(rawBody).some((body) => secrets.some((secret) => matches(secret, body)));
  return {
    ok: false,
    reason: 'signature_mismatch',
    hint: reserialized ? RESERIALIZED_HINT : `${mismatchHint(options.what, secrets.length)} (${options.advice})`,
  };
}

/** A refusal when the sender's clock (or a captured request's age) is outside the tolerance. */
export function checkSkew(skewS: number, toleranceS: number): Refusal | null {
  return Math.abs(skewS) > toleranceS ? { ok: false, reason: 'timestamp_out_of_tolerance', hint: skewHint(skewS, toleranceS) } : null;
}

export function hmac(algorithm: 'sha256' | 'sha1', key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function stringField(value: unknown, ...path: string[]): string | null {
  let current = value;
  for (const key of path) {
    // Own properties only: a key like "constructor" must not reach Object.prototype.
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return null;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === 'string' && current !== '' ? current : null;
}

/**
 * Bodies larger than this skip the re-serialization diagnosis. The check parses and
 * re-stringifies on the main thread, which for a forged 24 MB body cost seconds of event loop;
 * capped, a forged delivery costs about as much as hashing it. Relays that re-serialize do so
 * for ordinary API payloads, far below this size.
 */
export const RESERIALIZATION_MAX_BYTES = 256 * 1024;

/**
 * Other serializations of the same JSON a relay might have turned the original bytes into
 * (or back from). If the signature matches one of these, the body was re-serialized on the way.
 * Total on any input: too large, not JSON, or too deeply nested to stringify (V8's
 * JSON.stringify recurses and overflows the stack where JSON.parse does not) gives no forms.
 */
export function reserializations(body: Buffer): Buffer[] {
  if (body.byteLength > RESERIALIZATION_MAX_BYTES) return [];
  const parsed = parseJson(body);
  if (parsed === undefined || typeof parsed !== 'object' || parsed === null) return [];
  let forms: string[];
  try {
    forms = [JSON.stringify(parsed), JSON.stringify(parsed, null, 2), JSON.stringify(parsed, null, '\t')];
  } catch {
    return [];
  }
  const original = body.toString('utf8');
  return [...new Set(forms)].filter((form) => form !== original).map((form) => Buffer.from(form));
}

export const RESERIALIZED_HINT =
  'the signature matches a re-serialized copy of this JSON, not the bytes received: something between the sender and switchboard (a proxy, relay or framework body parser) parsed and re-wrote the body; forward the raw bytes unchanged';

export function mismatchHint(what: string, secretCount: number): string {
  return `${what} does not match ${secretCount === 1 ? 'the configured secret' : `any of the ${secretCount} configured secrets`}: the secret in switchboard is probably not the one set at the sender (copy it again from the provider's webhook settings)`;
}

export function skewHint(skewS: number, toleranceS: number): string {
  const direction = skewS > 0 ? 'in the future' : 'in the past';
  return `timestamp is ${Math.abs(skewS)} s ${direction} (tolerance ${toleranceS} s): check this machine's clock, or this is an old delivery being resent`;
}

/** Seconds the sender's timestamp is ahead of (positive) or behind (negative) our clock. */
export function skewSeconds(timestampS: number, nowMs: number): number {
  return Math.round(timestampS - nowMs / 1000);
}
