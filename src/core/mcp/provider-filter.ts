import { SwitchboardError } from '../errors.js';
import type { McpDeps } from './deps.js';

/**
 * A provider filter that matches nothing because of a typo ("gihub") would answer an empty page
 * (or wait out its timeout) and send an agent looking for a bug that is not there. A name that
 * is neither configured nor found on a stored event or rejection (a provider removed since) is
 * therefore `invalid_argument`, naming the providers that exist.
 */
export async function checkProviderFilter(deps: McpDeps, provider: string | undefined): Promise<void> {
  if (provider === undefined) return;
  const configured = deps.providers.statuses().map((status) => status.name);
  if (configured.includes(provider) || (await deps.store.providerSeen(provider))) return;
  const names = configured.length > 0 ? configured.map((name) => `"${name}"`).join(', ') : 'none (add one in config.json)';
  throw new SwitchboardError('invalid_argument', `there is no provider named ${JSON.stringify(provider)}; configured providers: ${names}`);
}
