import type { ProviderView } from '../../../shared/api';
import { shellQuote } from './curl';

/** A first delivery to try, for the "no events yet" screen: works as-is for open and token providers. */
export function tryItCommand(provider: ProviderView): string | null {
  if (!provider.receive_url) return null;
  const parts = ['curl', '-X', 'POST', shellQuote(provider.receive_url), '-H', shellQuote('content-type: application/json')];
  if (provider.status.trust_mode === 'token') parts.push('-H', '"X-Switchboard-Token: $TOKEN"');
  parts.push('-d', shellQuote('{"type":"hello","from":"switchboard"}'));
  return parts.join(' ');
}
