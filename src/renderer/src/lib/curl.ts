import { REDACTED } from '../../../shared/events.js';

/**
 * "Copy as cURL": a command that re-sends an event's body and headers. Headers that only make
 * sense on the original hop (host, length, encoding, proxies) are left out, and so are the
 * values switchboard redacted: a signature header saying «redacted» would only be rejected.
 *
 * The body never rides as a curl argument: `--data-binary '@…'` (or `-d @…`) makes curl upload
 * a local file when a body starts with "@", and a stored body is whatever a stranger sent. It
 * goes in on stdin instead (`--data-binary @-`): a single-quoted `printf %s` argument for
 * text, or base64 decoded on the way for bytes a shell argument cannot hold (NUL, invalid UTF-8).
 */

const HOP_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'accept-encoding', 'keep-alive', 'upgrade', 'expect']);

export interface CurlRequest {
  url: string;
  headers: Record<string, string>;
  payload: string;
  encoding: 'utf8' | 'base64';
  method?: string;
}

/** POSIX shell single-quoting: safe for any string without NUL. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function curlHeaders(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers).filter(
    ([name, value]) => !HOP_HEADERS.has(name.toLowerCase()) && !name.toLowerCase().startsWith('x-forwarded-') && !value.includes(REDACTED),
  );
}

export function buildCurl(request: CurlRequest): string {
  const parts = ['curl', '-X', request.method ?? 'POST', shellQuote(request.url)];
  for (const [name, value] of curlHeaders(request.headers)) parts.push('-H', shellQuote(`${name}: ${value}`));
  parts.push('--data-binary', '@-');
  const command = parts.join(' ');
  // A shell argument cannot carry NUL: such text goes the binary way too.
  if (request.encoding === 'base64' || request.payload.includes('\u0000')) {
    const base64 = request.encoding === 'base64' ? request.payload : utf8ToBase64(request.payload);
    return `printf %s ${shellQuote(base64)} | base64 -d | ${command}`;
  }
  return `printf %s ${shellQuote(request.payload)} | ${command}`;
}

function utf8ToBase64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
