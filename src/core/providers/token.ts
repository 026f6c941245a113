/**
 * Token kinds: the sender presents a shared secret; the body is not authenticated and there is
 * no replay protection (trust_mode "token", verified false). Defends only against a stranger
 * who found the tunnel URL. Accepted as `Authorization: Bearer <t>`, `X-Switchboard-Token: <t>`
 * or `?token=<t>` (for senders that can only set a URL), or GitLab's `X-Gitlab-Token`.
 */
import { matchingSecret, parseJson, safeEqual, stringField } from './crypto.js';
import type { Delivery, Verification, VerifyContext, Verifier } from './verifier.js';

function presentedToken(delivery: Delivery): string | undefined {
  const authorization = delivery.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match) return match[1]!.trim();
  }
  return delivery.headers['x-switchboard-token'] ?? delivery.query.get('token') ?? undefined;
}

function checkToken(given: string | undefined, { secrets }: VerifyContext, how: string): Verification {
  if (given === undefined || given === '') {
    return { ok: false, reason: 'token_missing', hint: `no token presented: send it as ${how}` };
  }
  const matched = matchingSecret(secrets, (secret) => safeEqual(secret, given));
  if (matched < 0) {
    return { ok: false, reason: 'token_mismatch', hint: 'the token does not match the configured one (check for a stale copy or trailing whitespace)' };
  }
  return { ok: true, detail: `token #${matched + 1} presented; body not verified; no replay protection in this scheme: a captured request re-sent is a new event` };
}

function genericType(delivery: Delivery): string | null {
  const body = parseJson(delivery.rawBody);
  return delivery.headers['x-event-type'] ?? stringField(body, 'type') ?? stringField(body, 'event') ?? stringField(body, 'event_type');
}

export const tokenVerifier: Verifier = {
  kind: 'token',
  trustMode: 'token',
  secretHeaders: ['authorization', 'x-switchboard-token'],
  replayHeaders: ['x-event-type'],
  verify: (delivery, context) =>
    checkToken(presentedToken(delivery), context, '"Authorization: Bearer <token>", "X-Switchboard-Token: <token>" or ?token=<token>'),
  describe: (delivery) => ({ eventType: genericType(delivery), externalId: null }),
};

export const gitlabVerifier: Verifier = {
  kind: 'gitlab',
  trustMode: 'token',
  secretHeaders: ['x-gitlab-token'],
  replayHeaders: ['x-gitlab-event', 'x-gitlab-event-uuid', 'x-gitlab-webhook-uuid', 'x-gitlab-instance'],
  verify: (delivery, context) => checkToken(delivery.headers['x-gitlab-token'], context, 'X-Gitlab-Token (the "Secret token" of the GitLab webhook)'),
  describe(delivery) {
    const body = parseJson(delivery.rawBody);
    return {
      eventType: stringField(body, 'object_kind') ?? delivery.headers['x-gitlab-event'] ?? null,
      externalId: delivery.headers['x-gitlab-event-uuid'] ?? null,
    };
  },
  sign: ({ secret }) => ({ 'x-gitlab-token': secret }),
};

/** No check at all: explicit opt-in only (a homelab script on the same machine, say). */
export const openVerifier: Verifier = {
  kind: 'open',
  trustMode: 'open',
  secretHeaders: [],
  replayHeaders: ['x-event-type'],
  verify: () => ({ ok: true, detail: 'open: accepted without any check (opt-in); no replay protection in this scheme' }),
  describe: (delivery) => ({ eventType: genericType(delivery), externalId: null }),
};
