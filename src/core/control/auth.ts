/**
 * Control-port access checks. The control port can read every stored payload and trigger
 * replays, so it defends against:
 * - other local users and processes: a bearer token (random, 0600 file, constant-time compare);
 * - DNS rebinding (a web page whose hostname re-resolves to 127.0.0.1): Host must be a
 *   loopback name, so a request for `evil.example` is refused even though it reached us;
 * - cross-site requests from a page the developer has open: an Origin header, when present,
 *   must be a loopback origin.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { isSwitchboardError, SwitchboardError } from '../errors.js';
import { fileTrouble } from '../file-trouble.js';
import { readPrivateFile, writePrivateFile } from '../private-files.js';
import { safeEqual } from '../providers/crypto.js';
import { unusableTokenReason } from './token-watcher.js';

export const TOKEN_FILE = 'control-token';

/**
 * Proof of identity (DESIGN §13, docs/security.md): before a client verb sends the control token
 * to the URL recorded in the data dir (or its config's port), it asks `GET /identity?nonce=N` —
 * no token — and the instance answers `HMAC-SHA256(identity-key, "switchboard-identity-v1\n" +
 * <its own control port> + "\n" + N)`. The key is a 0600 file of the data dir, so only an
 * instance run by the account that owns it can answer; the port in the proof is the one the
 * instance itself listens on, so a listener on a stale port cannot relay the question to the real
 * instance and pass its answer on.
 */
export const IDENTITY_KEY_FILE = 'identity-key';
export const IDENTITY_NONCE = /^[A-Za-z0-9_-]{32,128}$/;

export async function loadOrCreateIdentityKey(dataDir: string): Promise<string> {
  const path = join(dataDir, IDENTITY_KEY_FILE);
  const existing = (
    await readPrivateFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return Buffer.alloc(0);
      throw fileTrouble(error, path, 'read the identity key');
    })
  )
    .toString('utf8')
    .trim();
  if (existing.length >= 32) return existing;
  const key = randomBytes(32).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writePrivateFile(path, `${key}\n`).catch((error: unknown) => Promise.reject(fileTrouble(error, path, 'write the identity key')));
  return key;
}

export function identityProof(key: string, port: number, nonce: string): string {
  return createHmac('sha256', key).update(`switchboard-identity-v1\n${port}\n${nonce}`).digest('hex');
}

/** The shortest `SWITCHBOARD_TOKEN` accepted: the whole control credential must not be guessable. */
export const MIN_ENV_TOKEN_LENGTH = 24;

/**
 * A token given through the environment (`options.token`) is refused at start when it is too
 * short to be the only thing between another local account and every stored payload.
 */
export function checkControlToken(token: string | undefined): void {
  if (token === undefined) return;
  if (token.length < MIN_ENV_TOKEN_LENGTH || /\s/.test(token)) {
    throw new SwitchboardError(
      'config_invalid',
      `SWITCHBOARD_TOKEN is too short or has spaces: it must be at least ${MIN_ENV_TOKEN_LENGTH} characters without spaces (it has ${token.length}) — set a random one (openssl rand -base64 32) or unset it to use <data dir>/control-token`,
    );
  }
}

/** Reads `<dataDir>/control-token`, creating it (0600) on first run. */
export async function loadOrCreateToken(dataDir: string): Promise<string> {
  const path = join(dataDir, TOKEN_FILE);
  try {
    // Never through a symbolic link (issue #22.4): another account's file is not our token.
    const existing = (await readPrivateFile(path)).toString('utf8').trim();
    // A token written by hand is never silently replaced: its owner's clients would just get 401s.
    const unusable = existing === '' ? null : unusableTokenReason(existing);
    if (unusable) throw new SwitchboardError('config_invalid', `${path}: ${unusable}`, { hint: 'put such a token in the file, or delete it and a new one is created' });
    if (existing !== '') return existing;
  } catch (error) {
    if (isSwitchboardError(error)) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fileTrouble(error, path, 'read the control token');
  }
  const token = randomBytes(32).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writePrivateFile(path, `${token}\n`).catch((error: unknown) => Promise.reject(fileTrouble(error, path, 'write the control token')));
  return token;
}

/**
 * `localhost`, a 127.0.0.0/8 literal in plain dotted-quad form, or `[::1]`, with an optional
 * numeric port — nothing else. Parsed by hand, not with `new URL()`, which would accept and
 * rewrite `127.1`, `2130706433` or `LOCALHOST.`; anything odd (userinfo, a trailing dot, a
 * suffix after the bracket, a non-numeric port) is refused rather than interpreted. Hostnames
 * are case-insensitive (RFC 9110), so `LOCALHOST` is localhost.
 */
const AUTHORITY = /^(localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/i;

function isLoopbackAuthority(authority: string): boolean {
  const match = AUTHORITY.exec(authority);
  if (!match) return false;
  const [, host, port] = match as unknown as [string, string, string | undefined];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return false;
  if (host.startsWith('[')) return isLoopbackIpv6(host.slice(1, -1));
  if (host.toLowerCase() === 'localhost') return true;
  const octets = host.split('.');
  // Leading zeros are refused: some parsers read them as octal.
  return octets[0] === '127' && octets.every((octet) => /^(?:0|[1-9]\d{0,2})$/.test(octet) && Number(octet) <= 255);
}

/** `::1` in any spelling (`0:0:0:0:0:0:0:1`, `::0001`), and nothing else (no IPv4-mapped forms). */
function isLoopbackIpv6(address: string): boolean {
  if (isIP(address) !== 6) return false;
  const [head = '', tail = ''] = address.split('::');
  const groups = (text: string) => (text === '' ? [] : text.split(':'));
  const all = address.includes('::') ? [...groups(head), ...Array(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)] : groups(address);
  return all.length === 8 && all.every((group, index) => /^[0-9a-f]{1,4}$/i.test(group) && parseInt(group, 16) === (index === 7 ? 1 : 0));
}

/** The Host header of a request to the control port: exactly one, naming a loopback authority. */
export function isLoopbackHost(rawHeaders: readonly string[]): boolean {
  const hosts = headerValues(rawHeaders, 'host');
  return hosts.length === 1 && isLoopbackAuthority(hosts[0]!.trim());
}

/**
 * An Origin header, when present: exactly one, `http(s)://<loopback authority>` with nothing
 * after it. "null" (sandboxed iframes, file://) and anything else is refused.
 */
export function isLoopbackOrigin(rawHeaders: readonly string[]): boolean {
  const origins = headerValues(rawHeaders, 'origin');
  if (origins.length === 0) return true;
  if (origins.length > 1) return false;
  const match = /^https?:\/\/(.*)$/i.exec(origins[0]!.trim());
  return match !== null && isLoopbackAuthority(match[1]!);
}

/** Every value of a header, from Node's rawHeaders (which keeps duplicates that req.headers drops). */
function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.toLowerCase() === name) values.push(rawHeaders[index + 1]!);
  }
  return values;
}

export type BearerCheck = 'ok' | 'missing' | 'malformed' | 'wrong';

/**
 * Whether the request carries the control token. A refusal says which of missing, malformed
 * or wrong it was: "a token is required" to a client that sent a stale one reads like an OAuth
 * prompt, and sends MCP clients looking for a login that does not exist.
 */
export function checkBearer(authorization: string | undefined, token: string): BearerCheck {
  if (authorization === undefined || authorization.trim() === '') return 'missing';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return 'malformed';
  return safeEqual(match[1]!, token) ? 'ok' : 'wrong';
}
