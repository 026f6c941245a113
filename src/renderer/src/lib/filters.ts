import type { ApiInput } from '../../../shared/api';
import type { EventSummary, TrustMode } from '../../../shared/events';

/** The Events screen's filters, as the user set them (empty string = no filter). */
export interface EventFilters {
  provider: string;
  event_type: string;
  trust_mode: TrustMode | '';
  search: string;
}

export const NO_FILTERS: EventFilters = { provider: '', event_type: '', trust_mode: '', search: '' };

export function hasFilters(filters: EventFilters): boolean {
  return filters.provider !== '' || filters.event_type.trim() !== '' || filters.trust_mode !== '' || filters.search.trim() !== '';
}

export function filtersToQuery(filters: EventFilters): Omit<ApiInput<'listEvents'>, 'cursor' | 'limit'> {
  const query: Omit<ApiInput<'listEvents'>, 'cursor' | 'limit'> = {};
  if (filters.provider !== '') query.provider = filters.provider;
  if (filters.event_type.trim() !== '') query.event_type = filters.event_type.trim();
  if (filters.trust_mode !== '') query.trust_mode = filters.trust_mode;
  if (filters.search.trim() !== '') query.search = filters.search.trim();
  return query;
}

/**
 * Whether a live event belongs in the filtered list. A summary carries no payload, so with a
 * payload search the answer is 'unknown' and the list asks the server instead.
 */
export function matchesFilters(event: EventSummary, filters: EventFilters): 'yes' | 'no' | 'unknown' {
  if (filters.provider !== '' && event.provider !== filters.provider) return 'no';
  if (filters.event_type.trim() !== '' && event.event_type !== filters.event_type.trim()) return 'no';
  if (filters.trust_mode !== '' && event.trust_mode !== filters.trust_mode) return 'no';
  if (filters.search.trim() !== '') return 'unknown';
  return 'yes';
}
