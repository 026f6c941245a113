/**
 * Control-port access checks. The control port can read every stored payload and trigger
 * replays, so it defends against:
 * - other local users and processes: a bearer token (random, 0600 file, constant-time compare);
 * - DNS rebinding (a web page whose hostname re-resolves to 127.0.0.1): Host must be a
 *   loopback name, so a request for `evil.example` is refused even though it reached us;
 * - cross-site requests from a page the developer has open: an Origin header, when present,
 *   must be a loopback origin.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SwitchboardError } from '../errors.js';
import { safeEqual } from '../providers/crypto.js';
import { unusableTokenReason } from './token-watcher.js';

export const TOKEN_FILE = 'control-token';

const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Reads `<dataDir>/control-token`, creating it (0600) on first run. */
export async function loadOrCreateToken(dataDir: string): Promise<string> {
  const path = join(dataDir, TOKEN_FILE);
  try {
    const existing = (await readFile(path, 'utf8')).trim();
    // A token written by hand is never silently replaced: its owner's clients would just get 401s.
    const unusable = existing === '' ? null : unusableTokenReason(existing);
    if (unusable) throw new SwitchboardError('config_invalid', `${path}: ${unusable}`, { hint: 'put such a token in the file, or delete it and a new one is created' });
    if (existing !== '') return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return token;
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) {
    const end = hostHeader.indexOf(']');
    return end > 0 ? hostHeader.slice(0, end + 1) : hostHeader;
  }
  const colon = hostHeader.lastIndexOf(':');
  return colon >= 0 ? hostHeader.slice(0, colon) : hostHeader;
}

export function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  return LOOPBACK_HOSTNAMES.has(hostnameOf(hostHeader.trim().toLowerCase()));
}

export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTNAMES.has(url.hostname);
  } catch {
    return false; // includes the opaque origin "null" (sandboxed iframes, file://)
  }
}

export function bearerMatches(authorization: string | undefined, token: string): boolean {
  if (!authorization) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match !== null && safeEqual(match[1]!, token);
}
