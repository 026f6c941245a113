import type { WebhookKind } from '../config.js';
import { discordVerifier } from './discord.js';
import { githubVerifier } from './github.js';
import { linearVerifier } from './linear.js';
import { paddleVerifier } from './paddle.js';
import { shopifyVerifier } from './shopify.js';
import { slackVerifier } from './slack.js';
import { standardWebhooksVerifier } from './standard-webhooks.js';
import { stripeVerifier } from './stripe.js';
import { gitlabVerifier, openVerifier, tokenVerifier } from './token.js';
import { twilioVerifier } from './twilio.js';
import type { Verifier } from './verifier.js';

/** Every webhook kind switchboard understands. Adding a provider = one file + one line here. */
const VERIFIERS: Record<WebhookKind, Verifier> = {
  github: githubVerifier,
  stripe: stripeVerifier,
  slack: slackVerifier,
  shopify: shopifyVerifier,
  'standard-webhooks': standardWebhooksVerifier,
  linear: linearVerifier,
  paddle: paddleVerifier,
  discord: discordVerifier,
  twilio: twilioVerifier,
  gitlab: gitlabVerifier,
  token: tokenVerifier,
  open: openVerifier,
};

export function verifierFor(kind: WebhookKind): Verifier | undefined {
  return VERIFIERS[kind];
}

export function allVerifiers(): Verifier[] {
  return Object.values(VERIFIERS);
}
