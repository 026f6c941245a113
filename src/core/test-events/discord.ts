import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Discord interactions (https://discord.com/developers/docs/interactions/receiving-and-responding)
 * and webhook events (https://discord.com/developers/docs/events/webhook-events). Discord signs
 * with its own Ed25519 private key, which nobody else has: test events are signed with a key
 * pair this process makes (see marks.ts), and only a delivery carrying this process's test mark
 * is checked against that key.
 */

const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/** A snowflake for now: milliseconds since the Discord epoch, shifted, plus random low bits. */
function snowflake(c: FixtureContext): string {
  return String(((BigInt(c.nowMs) - DISCORD_EPOCH_MS) << 22n) | BigInt(c.int(0, 4_194_304)));
}

const USER = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', avatar: '8342729096ea3675442027381ff50dfe', discriminator: '0', public_flags: 131_328 };

function interaction(c: FixtureContext, type: number, extra: Record<string, unknown>) {
  return {
    json: {
      id: snowflake(c),
      application_id: '1154321098765432109',
      type,
      token: `aW50ZXJhY3Rpb246${c.id('', 120)}`,
      version: 1,
      ...extra,
    },
    headers: { 'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)' },
  };
}

export const DISCORD_FIXTURES: TestFixture[] = [
  {
    eventType: 'PING',
    description: 'The PING Discord sends to validate an interactions endpoint (answered with PONG)',
    build: (c) => interaction(c, 1, {}),
  },
  {
    eventType: 'APPLICATION_COMMAND',
    description: 'The slash command /hello used in a guild channel (stored as "APPLICATION_COMMAND hello")',
    build: (c) =>
      interaction(c, 2, {
        data: { id: '1154321098765432110', name: 'hello', type: 1, options: [{ name: 'who', type: 3, value: 'world' }] },
        guild_id: '613425648685547541',
        channel_id: '697138785317814292',
        channel: { id: '697138785317814292', name: 'general', type: 0, guild_id: '613425648685547541' },
        member: { user: USER, roles: [], joined_at: '2019-09-02T16:18:50.345000+00:00', deaf: false, mute: false, permissions: '2248473465835073' },
        locale: 'en-US',
        guild_locale: 'en-US',
        app_permissions: '2248473465835073',
        entitlements: [],
        authorizing_integration_owners: { '0': '613425648685547541' },
        context: 0,
      }),
  },
  {
    eventType: 'APPLICATION_AUTHORIZED',
    description: 'A webhook event: the app was added to a server (answered with 204)',
    build: (c) => ({
      json: {
        version: 1,
        application_id: '1154321098765432109',
        type: 1,
        event: {
          type: 'APPLICATION_AUTHORIZED',
          timestamp: c.isoMs(),
          data: { integration_type: 0, scopes: ['applications.commands', 'bot'], user: USER, guild: { id: snowflake(c), name: 'Webhook Testers', icon: null, owner_id: USER.id, features: [] } },
        },
      },
      headers: { 'user-agent': 'Discord-Webhook/1.0 (+https://discord.com)' },
    }),
  },
];
