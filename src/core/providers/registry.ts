import type { WebhookKind } from '../config.js';
import { githubVerifier } from './github.js';
import { slackVerifier } from './slack.js';
import { stripeVerifier } from './stripe.js';
import { gitlabVerifier, openVerifier, tokenVerifier } from './token.js';
import type { Verifier } from './verifier.js';

/** Every webhook kind switchboard understands. Adding a provider = one file + one line here. */
const VERIFIERS: Partial<Record<WebhookKind, Verifier>> = {
  github: githubVerifier,
  stripe: stripeVerifier,
  slack: slackVerifier,
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
