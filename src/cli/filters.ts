import { Option, type Command } from 'commander';
import { ORIGINS, TRUST_MODES } from '../shared/events.js';

/**
 * The event filters `events` and `export` share, with the API's names for them: one definition,
 * so both verbs (and the desktop's copied export command) take the same flags.
 */

export interface FilterFlags {
  provider?: string;
  type?: string;
  typePrefix?: string;
  trust?: (typeof TRUST_MODES)[number];
  origin?: (typeof ORIGINS)[number];
  search?: string;
}

export function withFilterOptions(command: Command): Command {
  return command
    .option('--provider <name>', 'only this provider')
    .option('--type <event_type>', 'only this event type')
    .option('--type-prefix <prefix>', 'only event types starting with this (pull_request finds pull_request.opened)')
    .addOption(new Option('--trust <mode>', 'only this trust mode').choices(TRUST_MODES))
    .addOption(new Option('--origin <origin>', 'only real deliveries, test events or imports').choices(ORIGINS))
    .option('--search <text>', 'free text matched against payloads and event types');
}

/** The flags given, as the API's filter fields (listEvents input, /api/export query). */
export function filtersOf(flags: FilterFlags) {
  return {
    ...(flags.provider !== undefined ? { provider: flags.provider } : {}),
    ...(flags.type !== undefined ? { event_type: flags.type } : {}),
    ...(flags.typePrefix !== undefined ? { event_type_prefix: flags.typePrefix } : {}),
    ...(flags.trust !== undefined ? { trust_mode: flags.trust } : {}),
    ...(flags.origin !== undefined ? { origin: flags.origin } : {}),
    ...(flags.search !== undefined ? { search: flags.search } : {}),
  };
}
