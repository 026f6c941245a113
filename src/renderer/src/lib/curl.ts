import { REDACTED } from '../../../shared/events';

/**
 * "Copy as cURL": a command that re-sends an event's body and headers. Headers that only make
 * sense on the original hop (host, length, encoding, proxies) are left out, and so are the
 * values switchboard redacted: a signature header saying «redacted» would only be rejected.
 */

const HOP_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'accept-encoding', 'keep-alive', 'upgrade', 'expect']);

export interface CurlRequest {
  url: string;
  headers: Record<string, string>;
  payload: string;
  encoding: 'utf8' | 'base64';
  method?: string;
}

/** POSIX shell single-quoting: safe for any byte sequence the UI can hold. */
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
  if (request.encoding === 'base64') {
    // Binary bodies cannot ride in a shell argument; decode them on the way in.
    return `printf %s ${shellQuote(request.payload)} | base64 -d | ${parts.join(' ')} --data-binary @-`;
  }
  parts.push('--data-binary', shellQuote(request.payload));
  return parts.join(' ');
}
