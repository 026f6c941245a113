import { REDACTED } from '../../shared/events.js';

/**
 * Messages sent over MCP are written never to contain a secret; this is the last line of
 * defence for text we did not write ourselves (a driver's error, a provider's last_error).
 * Very short values would match by coincidence, and real secrets are long.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 8) out = out.split(secret).join(REDACTED);
  }
  return out;
}
