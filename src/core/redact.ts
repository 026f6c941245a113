import { REDACTED } from '../shared/events.js';
import { allVerifiers } from './providers/registry.js';

/**
 * Header sanitizing, applied before anything is written or logged. Defends against secrets
 * leaking into the event log, the UI, MCP answers or logs: credentials (authorization, cookies,
 * tokens), signature headers of every known scheme (a signature plus its body is an oracle
 * for offline secret guessing), and any header that happens to contain a configured secret.
 */

const ALWAYS_SECRET = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-switchboard-token',
  'x-api-key',
  // switchboard's own test-event mark: a valid one is removed before storage, any other is kept redacted.
  'x-switchboard-test',
]);

let knownSignatureHeaders: Set<string> | undefined;

function signatureHeaders(): Set<string> {
  knownSignatureHeaders ??= new Set(allVerifiers().flatMap((verifier) => verifier.secretHeaders));
  return knownSignatureHeaders;
}

export function isSecretHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    ALWAYS_SECRET.has(lower) ||
    signatureHeaders().has(lower) ||
    /^x-.*-token$/.test(lower) ||
    /signature/.test(lower)
  );
}

/** Flattens Node's header object (lowercased names, repeated values joined) and redacts it. */
export function sanitizeHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  secrets: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const lower = name.toLowerCase();
    out[lower] = isSecretHeader(lower) || containsSecret(value, secrets) ? REDACTED : value;
  }
  return out;
}

function containsSecret(value: string, secrets: readonly string[]): boolean {
  // Very short secrets would redact by coincidence; real ones are long.
  return secrets.some((secret) => secret.length >= 8 && value.includes(secret));
}

/** `/webhooks/x?token=abc&a=1` → `/webhooks/x?token=«redacted»&a=1`, for logs. */
export function redactQuery(path: string): string {
  return path.replace(/([?&](?:token|access_token|key|secret)=)[^&]*/gi, `$1${encodeURIComponent(REDACTED)}`);
}
