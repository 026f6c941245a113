import type { ProviderKind } from '../config.js';
import { DISCORD_FIXTURES } from './discord.js';
import type { TestFixture } from './fixture.js';
import { GENERIC_FIXTURES } from './generic.js';
import { GITHUB_FIXTURES } from './github.js';
import { GITLAB_FIXTURES } from './gitlab.js';
import { LINEAR_FIXTURES } from './linear.js';
import { PADDLE_FIXTURES } from './paddle.js';
import { SHOPIFY_FIXTURES } from './shopify.js';
import { SLACK_FIXTURES } from './slack.js';
import { STANDARD_WEBHOOKS_FIXTURES } from './standard-webhooks.js';
import { STRIPE_FIXTURES } from './stripe.js';
import { TWILIO_FIXTURES } from './twilio.js';

/**
 * The test event catalog (DESIGN §11): fixtures per provider kind, the first one the default.
 * docs/test-events.md is generated from this table (test/core/test-events/catalog-doc.test.ts
 * fails when they disagree).
 */
export const TEST_FIXTURES: Record<ProviderKind, readonly TestFixture[]> = {
  github: GITHUB_FIXTURES,
  stripe: STRIPE_FIXTURES,
  slack: SLACK_FIXTURES,
  shopify: SHOPIFY_FIXTURES,
  'standard-webhooks': STANDARD_WEBHOOKS_FIXTURES,
  linear: LINEAR_FIXTURES,
  paddle: PADDLE_FIXTURES,
  discord: DISCORD_FIXTURES,
  twilio: TWILIO_FIXTURES,
  gitlab: GITLAB_FIXTURES,
  token: GENERIC_FIXTURES,
  open: GENERIC_FIXTURES,
  'redis-pubsub': GENERIC_FIXTURES,
  'redis-stream': GENERIC_FIXTURES,
};

export function fixturesFor(kind: ProviderKind): readonly TestFixture[] {
  return TEST_FIXTURES[kind];
}
