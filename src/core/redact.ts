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
  // switchboard's own test-event mark: a valid one is removed before storage, any other is kept redacted.
  'x-switchboard-test',
]);

/**
 * Credential-looking names, matched on the whole name: `token`, `x-api-token`, `x-csrf-token`,
 * `x-secret`, `client-secret`, `x-password`, `api-key`, `x-apikey`, `x-auth`, `x-auth-user`,
 * `x-session-id`, `x-amz-security-token`, `*-signature*`, `*-credential*`, `*-jwt`…
 * Redacting one header too many costs a little context; one too few leaks a credential.
 */
const SECRET_NAME = /token|secret|passw|signature|session|cookie|credential|api[-_]?key|(?:access|private|signing|client|master)[-_]?key|jwt|bearer/;
/** Name segments ("x-auth-user" → x, auth, user) that say "credential": auth, xauth, oauth, passwd… */
const SECRET_SEGMENT = /^(?:\w*auth\w*|pwd|pass|passwd|otp|sid)$/;
/** Segments that contain "auth" without being one. */
const NOT_SECRET_SEGMENT = /^(?:authors?|authority)$/;

let knownSignatureHeaders: Set<string> | undefined;
let knownRoutingHeaders: Set<string> | undefined;

function signatureHeaders(): Set<string> {
  knownSignatureHeaders ??= new Set(allVerifiers().flatMap((verifier) => verifier.secretHeaders));
  return knownSignatureHeaders;
}

/**
 * Headers a provider routes on and a replay must send back intact (Twilio's
 * `i-twilio-idempotency-token` is an id, not a credential, whatever its name says).
 */
function routingHeaders(): Set<string> {
  knownRoutingHeaders ??= new Set(allVerifiers().flatMap((verifier) => verifier.replayHeaders).filter((name) => !signatureHeaders().has(name)));
  return knownRoutingHeaders;
}

/**
 * Verdicts by lowercased name: the same few names come with every delivery. Bounded in count and
 * name length, so a sender inventing names cannot grow it; other names are judged each time.
 */
const verdicts = new Map<string, boolean>();
const MAX_CACHED_VERDICTS = 4096;
const MAX_CACHED_NAME_CHARS = 64;

export function isSecretHeader(name: string): boolean {
  const lower = name.toLowerCase();
  let verdict = verdicts.get(lower);
  if (verdict === undefined) {
    verdict = judgeHeaderName(lower);
    if (verdicts.size < MAX_CACHED_VERDICTS && lower.length <= MAX_CACHED_NAME_CHARS) verdicts.set(lower, verdict);
  }
  return verdict;
}

function judgeHeaderName(lower: string): boolean {
  if (ALWAYS_SECRET.has(lower) || signatureHeaders().has(lower)) return true;
  if (routingHeaders().has(lower)) return false;
  return SECRET_NAME.test(lower) || lower.split(/[-_.]/).some((segment) => SECRET_SEGMENT.test(segment) && !NOT_SECRET_SEGMENT.test(segment));
}

/** Flattens Node's header object (lowercased names, repeated values joined) and redacts it. */
export function sanitizeHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  secrets: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  // for…in rather than Object.entries: no array per header, for every delivery.
  for (const name in headers) {
    const raw = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const lower = name.toLowerCase();
    out[lower] = isSecretHeader(lower) || containsSecret(value, secrets) ? REDACTED : value;
  }
  return out;
}

/** Very short secrets would match by coincidence; real ones are long. */
const MIN_SECRET_CHARS = 8;
/** Runs long enough to hold an encoded secret. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{11,}={0,2}/g;
const HEX_RUN = /[0-9a-fA-F]{16,}/g;

interface SecretNeedles {
  /** The secrets long enough to look for, as sent raw… */
  raw: string[];
  /** …and as their UTF-8 bytes (latin1 strings), the form decoded runs are compared in. */
  bytes: string[];
  /** The shortest of each: a view shorter than that cannot hold any of them. */
  minChars: number;
  minBytes: number;
}

/** Per secrets list (ProviderSet keeps one array until the config changes): every header of every delivery is checked. */
const needlesCache = new WeakMap<readonly string[], SecretNeedles>();

function needlesFor(secrets: readonly string[]): SecretNeedles {
  let needles = needlesCache.get(secrets);
  if (!needles) {
    const raw = secrets.filter((secret) => secret.length >= MIN_SECRET_CHARS);
    const bytes = raw.map((secret) => Buffer.from(secret, 'utf8').toString('latin1'));
    needles = { raw, bytes, minChars: Math.min(...raw.map((secret) => secret.length)), minBytes: Math.min(...bytes.map((secret) => secret.length)) };
    needlesCache.set(secrets, needles);
  }
  return needles;
}

/**
 * Whether `value` carries a configured secret as sent raw or in a common encoding: URL-encoded,
 * base64 / base64url (alone or around other text, as in `Basic base64(user:secret)`), or hex.
 * Rather than encode each secret every way (base64 has three alignments inside a longer text),
 * the value's encoded-looking runs are decoded and searched. Every view (URL-decoded, or a run
 * decoded to bytes) is at most as long as the value, and a secret's UTF-8 bytes are at least as
 * many as its characters: a value (or run) shorter than the shortest secret cannot hold one.
 */
export function containsSecret(value: string, secrets: readonly string[]): boolean {
  const { raw, bytes, minChars, minBytes } = needlesFor(secrets);
  if (raw.length === 0 || value.length < minChars) return false;
  const views = [value];
  try {
    views.push(decodeURIComponent(value.replace(/\+/g, ' ')));
  } catch {
    // not URL-encoded
  }
  const decoded: string[] = [];
  for (const run of value.match(BASE64_RUN) ?? []) {
    // 4 characters decode to at most 3 bytes.
    if (Math.ceil((run.length * 3) / 4) < minBytes) continue;
    // The encoded secret may start at any of four alignments inside a longer run.
    for (let offset = 0; offset < 4; offset++) decoded.push(Buffer.from(run.slice(offset), 'base64').toString('latin1'));
  }
  for (const run of value.match(HEX_RUN) ?? []) {
    if (run.length / 2 < minBytes) continue;
    decoded.push(Buffer.from(run, 'hex').toString('latin1'), Buffer.from(run.slice(1), 'hex').toString('latin1'));
  }
  // Decoded runs are bytes (as latin1): compare them with the secret's UTF-8 bytes.
  return raw.some((secret, index) => views.some((view) => view.includes(secret)) || decoded.some((view) => view.includes(bytes[index]!)));
}

/**
 * `/webhooks/x?token=abc&a=1` → `/webhooks/x?token=«redacted»&a=1`: every parameter whose name
 * looks like a credential, or whose value carries a configured secret, for logs and anything
 * else that keeps a URL.
 */
export function redactQuery(path: string, secrets: readonly string[] = []): string {
  const mark = path.indexOf('?');
  if (mark < 0) return path;
  const fragment = path.indexOf('#', mark);
  const query = path.slice(mark + 1, fragment < 0 ? undefined : fragment);
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      let decodedName = name;
      try {
        decodedName = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // keep it as sent
      }
      const secretName = isSecretHeader(decodedName) || /^(?:key|sig|code|access_token|id_token)$/i.test(decodedName);
      return secretName || containsSecret(pair.slice(eq + 1), secrets) ? `${name}=${encodeURIComponent(REDACTED)}` : pair;
    })
    .join('&');
  return `${path.slice(0, mark + 1)}${redacted}${fragment < 0 ? '' : path.slice(fragment)}`;
}

/**
 * The forms a secret takes in a handler's answer (DESIGN §6, #22.7), as latin1 strings (one
 * character per byte), longest first: its UTF-8 bytes raw; URL-encoded (upper- and lowercase
 * escapes, `+` for a space); base64 and base64url at each of the three byte alignments it can
 * have inside a longer encoded text (only the characters that depend on the secret's bytes
 * alone); hex in either case.
 */
const scrubCache = new WeakMap<readonly string[], string[]>();

function secretForms(secrets: readonly string[]): string[] {
  let forms = scrubCache.get(secrets);
  if (!forms) {
    const all = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < MIN_SECRET_CHARS) continue;
      const bytes = Buffer.from(secret, 'utf8');
      all.add(bytes.toString('latin1'));
      const url = encodeURIComponent(secret);
      all.add(url).add(url.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())).add(url.replace(/%20/g, '+'));
      for (let align = 0; align < 3; align++) {
        const encoded = Buffer.concat([Buffer.alloc(align), bytes]).toString('base64');
        // Characters that mix the padding's bits (before) or the next bytes' bits (after) differ per context.
        const skip = align === 0 ? 0 : align + 1;
        const core = encoded.slice(skip, Math.floor(((align + bytes.length) * 8) / 6));
        if (core.length >= MIN_SECRET_CHARS) all.add(core).add(core.replace(/\+/g, '-').replace(/\//g, '_'));
      }
      all.add(bytes.toString('hex')).add(bytes.toString('hex').toUpperCase());
    }
    forms = [...all].sort((a, b) => b.length - a.length);
    scrubCache.set(secrets, forms);
  }
  return forms;
}

const REDACTED_LATIN1 = Buffer.from(REDACTED, 'utf8').toString('latin1');

/**
 * A handler's answer with every configured secret replaced by «redacted», in every form above,
 * text or binary alike, before the API, MCP, the UI or a `replays` row sees it. An answer cut at
 * the size cap that ends with the start of a form has that start replaced too.
 */
export function scrubSecrets(body: Uint8Array, secrets: readonly string[]): Uint8Array {
  const forms = secretForms(secrets);
  if (forms.length === 0 || body.length === 0) return body;
  const original = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1');
  let text = original;
  for (const form of forms) if (text.includes(form)) text = text.split(form).join(REDACTED_LATIN1);
  for (const form of forms) {
    for (let length = form.length - 1; length >= MIN_SECRET_CHARS; length--) {
      if (text.endsWith(form.slice(0, length))) {
        text = text.slice(0, text.length - length) + REDACTED_LATIN1;
        break;
      }
    }
  }
  return text === original ? body : Buffer.from(text, 'latin1');
}
