import { randomBytes, randomInt, randomUUID } from 'node:crypto';

/**
 * A test event fixture: one event type of one provider kind, shaped like the provider's
 * documented payload. `build` runs on every send with fresh ids and times, so a second send is
 * a new event (a new delivery id), never a duplicate of the first.
 */
export interface TestFixture {
  /** What `switchboard trigger <provider> <event_type>` and the UI call it. */
  eventType: string;
  /** One line for the catalog (docs/test-events.md is generated from these). */
  description: string;
  build(context: FixtureContext): FixturePayload;
}

/** A JSON body or form fields (Slack slash commands, Twilio), plus the kind's routing headers. */
export type FixturePayload = (
  | { json: Record<string, unknown>; form?: never }
  | { form: Record<string, string>; json?: never }
) & {
  /** Non-secret headers the provider sends (event name, delivery id, …); signatures are added later. */
  headers?: Record<string, string>;
};

/** Fresh values for one send. */
export interface FixtureContext {
  nowMs: number;
  /** The provider's name (for URLs and labels in payloads). */
  provider: string;
  /** `prefix` + `length` random characters from [A-Za-z0-9], e.g. Stripe's `evt_1Px…`. */
  id(prefix?: string, length?: number): string;
  /** Random lowercase hex of `bytes` bytes (commit shas, request ids). */
  hex(bytes: number): string;
  uuid(): string;
  /** A random integer in [min, max). */
  int(min: number, max: number): number;
  /** ISO-8601 time `offsetS` seconds from now, without milliseconds (as GitHub writes it). */
  iso(offsetS?: number): string;
  /** ISO-8601 time with milliseconds. */
  isoMs(offsetS?: number): string;
  /** Unix seconds `offsetS` from now. */
  unix(offsetS?: number): number;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function fixtureContext(provider: string, nowMs: number): FixtureContext {
  const at = (offsetS: number) => new Date(nowMs + offsetS * 1000);
  return {
    nowMs,
    provider,
    id(prefix = '', length = 24) {
      let out = prefix;
      for (const byte of randomBytes(length)) out += ALPHANUMERIC[byte % ALPHANUMERIC.length];
      return out;
    },
    hex: (bytes) => randomBytes(bytes).toString('hex'),
    uuid: () => randomUUID(),
    int: (min, max) => randomInt(min, max),
    iso: (offsetS = 0) => at(offsetS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    isoMs: (offsetS = 0) => at(offsetS).toISOString(),
    unix: (offsetS = 0) => Math.floor(nowMs / 1000) + offsetS,
  };
}
