import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Standard Webhooks senders, shaped like Clerk's events (https://clerk.com/docs/webhooks/overview):
 * `{data, object: "event", type, timestamp, instance_id}`, with a fresh `webhook-id` per message
 * (the id is part of what the signature covers).
 */

function message(c: FixtureContext, type: string, data: Record<string, unknown>) {
  return {
    json: { data, event_attributes: { http_request: { client_ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15' } }, instance_id: c.id('ins_', 27), object: 'event', timestamp: c.nowMs, type },
    headers: { 'user-agent': 'Svix-Webhooks/1.62.0', 'webhook-id': c.id('msg_', 27) },
  };
}

function clerkUser(c: FixtureContext, createdOffsetS: number) {
  const emailId = c.id('idn_', 27);
  return {
    id: c.id('user_', 27),
    object: 'user',
    backup_code_enabled: false,
    banned: false,
    created_at: c.nowMs + createdOffsetS * 1000,
    email_addresses: [{ id: emailId, object: 'email_address', email_address: 'jenny.rosen@example.com', linked_to: [], verification: { status: 'verified', strategy: 'email_code', attempts: 1, expire_at: c.nowMs + 600_000 } }],
    external_accounts: [],
    external_id: null,
    first_name: 'Jenny',
    has_image: false,
    image_url: `https://img.clerk.com/${c.id('', 40)}`,
    last_name: 'Rosen',
    last_sign_in_at: null,
    locked: false,
    password_enabled: true,
    phone_numbers: [],
    primary_email_address_id: emailId,
    primary_phone_number_id: null,
    private_metadata: {},
    public_metadata: {},
    two_factor_enabled: false,
    unsafe_metadata: {},
    updated_at: c.nowMs,
    username: null,
  };
}

export const STANDARD_WEBHOOKS_FIXTURES: TestFixture[] = [
  {
    eventType: 'user.created',
    description: 'A user signed up (Clerk-style payload)',
    build: (c) => message(c, 'user.created', clerkUser(c, 0)),
  },
  {
    eventType: 'user.updated',
    description: 'A user changed their profile (Clerk-style payload)',
    build: (c) => message(c, 'user.updated', { ...clerkUser(c, -7 * 86_400), first_name: 'Jen', public_metadata: { plan: 'pro' } }),
  },
  {
    eventType: 'session.created',
    description: 'A user signed in (Clerk-style session)',
    build: (c) =>
      message(c, 'session.created', {
        id: c.id('sess_', 27),
        object: 'session',
        abandon_at: c.nowMs + 30 * 86_400_000,
        client_id: c.id('client_', 27),
        created_at: c.nowMs,
        expire_at: c.nowMs + 7 * 86_400_000,
        last_active_at: c.nowMs,
        status: 'active',
        updated_at: c.nowMs,
        user_id: c.id('user_', 27),
      }),
  },
];
