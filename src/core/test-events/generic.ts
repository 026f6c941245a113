import type { TestFixture } from './fixture.js';

/**
 * Token, open and queue providers have no payload format of their own: a generic JSON event,
 * typed by its `type` field (what the token and open kinds, and the queue kinds' default
 * `type_field`, read the event type from).
 */
export const GENERIC_FIXTURES: TestFixture[] = [
  {
    eventType: 'switchboard.test',
    description: 'A generic JSON event: {id, type, created_at, data}',
    build: (c) => ({
      json: {
        id: c.id('evt_', 20),
        type: 'switchboard.test',
        created_at: c.isoMs(),
        data: { message: 'Hello from switchboard', source: c.provider, attempt: 1 },
      },
      headers: { 'x-event-type': 'switchboard.test' },
    }),
  },
];
