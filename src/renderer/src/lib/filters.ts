import type { ApiInput } from '../../../shared/api';
import { TRUST_MODES, type EventSummary, type TrustMode } from '../../../shared/events';

/** The Events screen's filters, as the user set them (empty string = no filter). */
export interface EventFilters {
  provider: string;
  /** A type prefix: `pull_request` matches `pull_request.opened` and `pull_request.closed`. */
  event_type: string;
  trust_mode: TrustMode | '';
  search: string;
  /** Only events that drifted from their type's shape (DESIGN §16): the list's own filter. */
  drift: boolean;
}

export const NO_FILTERS: EventFilters = { provider: '', event_type: '', trust_mode: '', search: '', drift: false };

export function hasFilters(filters: EventFilters): boolean {
  return filters.provider !== '' || filters.event_type.trim() !== '' || filters.trust_mode !== '' || filters.search.trim() !== '' || filters.drift;
}

/**
 * The list's query: the filters export and "Save as suite" share (filtersToQuery), and the drift
 * filter, which only the list takes.
 */
export function listQuery(filters: EventFilters): Omit<ApiInput<'listEvents'>, 'cursor' | 'limit'> {
  return { ...filtersToQuery(filters), ...(filters.drift ? { drift: true } : {}) };
}

export function filtersToQuery(filters: EventFilters): Omit<ApiInput<'listEvents'>, 'cursor' | 'limit'> {
  const query: Omit<ApiInput<'listEvents'>, 'cursor' | 'limit'> = {};
  if (filters.provider !== '') query.provider = filters.provider;
  if (filters.event_type.trim() !== '') query.event_type_prefix = filters.event_type.trim();
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
  const type = filters.event_type.trim();
  if (type !== '' && !(event.event_type ?? '').startsWith(type)) return 'no';
  if (filters.trust_mode !== '' && event.trust_mode !== filters.trust_mode) return 'no';
  // A new event is shaped after it is stored: whether it drifted, the server says later.
  if (filters.search.trim() !== '' || filters.drift) return 'unknown';
  return 'yes';
}

/** The Events view as its address: filters and the open event (`?provider=…&type=…&event=42`). */
export interface EventsView {
  filters: EventFilters;
  eventId: number | null;
}

const PARAM = { provider: 'provider', event_type: 'type', trust_mode: 'trust', search: 'search' } as const;

export function viewFromParams(params: URLSearchParams): EventsView {
  const trust = params.get(PARAM.trust_mode) ?? '';
  const id = Number(params.get('event'));
  return {
    filters: {
      provider: params.get(PARAM.provider) ?? '',
      event_type: params.get(PARAM.event_type) ?? '',
      trust_mode: (TRUST_MODES as readonly string[]).includes(trust) ? (trust as TrustMode) : '',
      search: params.get(PARAM.search) ?? '',
      drift: params.get('drift') === '1',
    },
    eventId: Number.isSafeInteger(id) && id > 0 ? id : null,
  };
}

export function viewToParams(view: EventsView): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of Object.keys(PARAM) as (keyof typeof PARAM)[]) {
    const value = view.filters[key].trim();
    if (value !== '') params.set(PARAM[key], value);
  }
  if (view.filters.drift) params.set('drift', '1');
  if (view.eventId !== null) params.set('event', String(view.eventId));
  return params;
}
