import { describe, expect, it } from 'vitest';
import type { EventSummary } from '../../src/shared/events';
import { filtersToQuery, hasFilters, listQuery, matchesFilters, NO_FILTERS, viewFromParams, viewToParams } from '../../src/renderer/src/lib/filters';

const event: EventSummary = {
  id: 7,
  provider: 'github',
  family: 'webhook',
  event_type: 'pull_request.opened',
  external_id: null,
  origin: 'provider',
  trust_mode: 'signed',
  verified: true,
  payload_size: 10,
  received_at: '2026-11-30T10:00:00.000000Z',
  attempts: 1,
  drift: false,
};

describe('event filters', () => {
  it('sends only what is set, trimmed', () => {
    expect(filtersToQuery(NO_FILTERS)).toEqual({});
    expect(filtersToQuery({ provider: 'github', event_type: ' push ', trust_mode: 'token', search: '  ', drift: false })).toEqual({ provider: 'github', event_type_prefix: 'push', trust_mode: 'token' });
    expect(filtersToQuery({ ...NO_FILTERS, search: ' acme ' })).toEqual({ search: 'acme' });
    expect(hasFilters(NO_FILTERS)).toBe(false);
    expect(hasFilters({ ...NO_FILTERS, search: 'x' })).toBe(true);
  });

  it('sends the drift filter with the list only (export and suites take the others)', () => {
    expect(hasFilters({ ...NO_FILTERS, drift: true })).toBe(true);
    expect(listQuery({ ...NO_FILTERS, provider: 'github', drift: true })).toEqual({ provider: 'github', drift: true });
    expect(listQuery(NO_FILTERS)).toEqual({});
    expect(filtersToQuery({ ...NO_FILTERS, drift: true })).toEqual({});
    // A live event is shaped after it is stored: the server says whether it drifted.
    expect(matchesFilters(event, { ...NO_FILTERS, drift: true })).toBe('unknown');
    expect(matchesFilters(event, { ...NO_FILTERS, provider: 'stripe', drift: true })).toBe('no');
  });

  it('decides live rows locally, except for payload searches', () => {
    expect(matchesFilters(event, NO_FILTERS)).toBe('yes');
    expect(matchesFilters(event, { ...NO_FILTERS, provider: 'github', trust_mode: 'signed', event_type: 'pull_request.opened' })).toBe('yes');
    expect(matchesFilters(event, { ...NO_FILTERS, provider: 'stripe' })).toBe('no');
    expect(matchesFilters(event, { ...NO_FILTERS, trust_mode: 'open' })).toBe('no');
    expect(matchesFilters(event, { ...NO_FILTERS, event_type: 'push' })).toBe('no');
    // The type box matches by prefix, as the server does.
    expect(matchesFilters(event, { ...NO_FILTERS, event_type: 'pull_request' })).toBe('yes');
    expect(matchesFilters(event, { ...NO_FILTERS, event_type: 'pull_request.opened' })).toBe('yes');
    expect(matchesFilters(event, { ...NO_FILTERS, event_type: 'pull_request.closed' })).toBe('no');
    expect(matchesFilters({ ...event, event_type: null }, { ...NO_FILTERS, event_type: 'p' })).toBe('no');
    expect(matchesFilters(event, { ...NO_FILTERS, search: 'acme' })).toBe('unknown');
    // A row already excluded by a cheap filter never costs a server round trip.
    expect(matchesFilters(event, { ...NO_FILTERS, provider: 'stripe', search: 'acme' })).toBe('no');
  });

  it('round-trips the view through the address, dropping what is not set or not valid', () => {
    const view = { filters: { provider: 'github', event_type: 'pull_request', trust_mode: 'signed' as const, search: 'a&b #1', drift: true }, eventId: 42 };
    const params = viewToParams(view);
    expect(params.toString()).toBe('provider=github&type=pull_request&trust=signed&search=a%26b+%231&drift=1&event=42');
    expect(viewFromParams(new URLSearchParams(params.toString()))).toEqual(view);
    expect(viewToParams({ filters: NO_FILTERS, eventId: null }).toString()).toBe('');
    expect(viewFromParams(new URLSearchParams('trust=bogus&event=-3&provider='))).toEqual({ filters: NO_FILTERS, eventId: null });
    expect(viewFromParams(new URLSearchParams('event=7.5')).eventId).toBeNull();
  });
});
