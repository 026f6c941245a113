import type { ProviderConfig } from '../config.js';

/**
 * The URLs a provider forwards every accepted event to, in config order. Forward rules, the
 * default replay target (DESIGN §7) and `list_providers` all read them here, so a new way of
 * writing a rule in config.json (`forward: [{to, chaos}]` beside `forward_to`) is added once.
 */
export function forwardTargets(provider: ProviderConfig | undefined): string[] {
  return provider ? [...provider.forward_to] : [];
}
