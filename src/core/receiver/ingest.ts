import { createHash } from 'node:crypto';
import type { EventBus } from '../bus.js';
import { isSwitchboardError } from '../errors.js';
import { JournalFullError } from '../journal/event-journal.js';
import type { Logger } from '../logger.js';
import type { ProviderSet, WebhookProvider } from '../provider-set.js';
import type { Delivery, RejectionReason, Verification } from '../providers/verifier.js';
import { sanitizeHeaders } from '../redact.js';
import type { EventStore } from '../store/event-store.js';
import type { InsertResult } from '../store/types.js';
import type { TestClaim, TestMarks } from '../test-marks.js';
import { ANSWER_RULE_HEADER } from '../../shared/delivery-lab.js';
import type { AnswerDecision, AnswerRules } from './answer-rules.js';
import type { AttemptRecorder } from './attempt-recorder.js';

/**
 * The webhook pipeline (DESIGN §4): verify the raw bytes → normalize → store → answer →
 * broadcast. The answer is computed only after the row is committed (store-then-ack), so a
 * 200 means the event is on disk; a storage failure answers 503 so the provider retries.
 */

export interface Answer {
  status: number;
  body: string;
  contentType: string;
  /** Extra response headers (Retry-After). */
  headers?: Record<string, string>;
  /** An answer rule's delay (DESIGN §15): the receiver waits this long before sending it. */
  delayMs?: number;
}

export interface IngestDeps {
  store: EventStore;
  bus: EventBus;
  providers: ProviderSet;
  logger: Logger;
  /** Recognises switchboard's own test events (absent: none are). */
  testMarks?: TestMarks;
  /** Answer rules and attempts (DESIGN §15; absent: every delivery gets the normal answer, attempts are not counted). */
  answers?: AnswerRules;
  attempts?: AttemptRecorder;
}

export interface IncomingDelivery extends Delivery {
  providerName: string;
  /** Node's header object (before flattening), for sanitizing. */
  rawHeaders: Readonly<Record<string, string | string[] | undefined>>;
  sourceIp: string | null;
  /** Set when this delivery is a test event this process sent (test-events/marks.ts). */
  test?: TestClaim | null;
}

const json = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body), contentType: 'application/json' });

export const errorAnswer = (status: number, error: string, hint?: string): Answer => json(status, hint ? { error, hint } : { error });

/** Looks up an enabled webhook provider, or explains why the route does not exist. */
export function routeFor(providers: ProviderSet, name: string): { provider: WebhookProvider } | { answer: Answer } {
  const provider = providers.webhook(name);
  if (!provider) {
    return {
      answer: errorAnswer(404, 'unknown_provider', `no webhook provider named "${name}": add one to config.json or on the Providers screen`),
    };
  }
  if (!provider.config.enabled) {
    return { answer: errorAnswer(404, 'provider_disabled', `provider "${name}" is disabled: enable it on the Providers screen`) };
  }
  return { provider };
}

export async function recordRejection(
  deps: IngestDeps,
  provider: WebhookProvider,
  delivery: Pick<IncomingDelivery, 'rawHeaders' | 'sourceIp'>,
  reason: RejectionReason,
  hint: string,
  body: { size: number; sha256: string },
): Promise<void> {
  try {
    const rejection = await deps.store.insertRejection({
      provider: provider.name,
      reason,
      hint,
      headers: sanitizeHeaders(delivery.rawHeaders, deps.providers.allSecrets()),
      body_size: body.size,
      body_sha256: body.sha256,
      source_ip: delivery.sourceIp,
    });
    deps.bus.emit('rejection', rejection);
  } catch (error) {
    // The answer to the sender is the verification outcome either way; losing the diagnostic
    // row is logged, not escalated.
    deps.logger.error(`could not record a rejection for "${provider.name}": ${(error as Error).message}`);
  }
}

export const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * A Discord test event is signed with this process's own Ed25519 key (only Discord holds the
 * application's private key): its signature proves switchboard made it, nothing about Discord.
 */
export const DISCORD_TEST_DETAIL =
  "signed by switchboard, not by Discord: a test event whose Ed25519 signature was checked against switchboard's per-process test key, not the application's public_key";

export async function ingest(deps: IngestDeps, provider: WebhookProvider, delivery: IncomingDelivery): Promise<Answer> {
  const { verifier } = provider;
  const bodyFacts = () => ({ size: delivery.rawBody.byteLength, sha256: sha256Hex(delivery.rawBody) });

  const needsSecret = verifier.trustMode !== 'open';
  if (needsSecret && provider.secretStatus === 'missing') {
    const hint = `provider "${provider.name}" has no usable secret: ${provider.secretAdvice ?? 'configure one'}; then deliver again`;
    await recordRejection(deps, provider, delivery, 'secret_not_configured', hint, bodyFacts());
    return errorAnswer(503, 'secret_not_configured', hint);
  }

  const verification = verifySafely(deps, provider, delivery);
  // `test` is null for every real delivery: only a claimed test mark swaps the detail.
  const discordTest = Boolean(delivery.test) && verifier.kind === 'discord';
  if (!verification.ok) {
    await recordRejection(deps, provider, delivery, verification.reason, verification.hint, bodyFacts());
    const status = verification.reason === 'public_url_not_configured' ? 503 : verifier.trustMode === 'token' ? 403 : 401;
    return errorAnswer(status, verification.reason, verification.hint);
  }

  const { eventType, externalId } = attempt(deps, provider, 'reading the type and id of', () => verifier.describe(delivery)) ?? {
    eventType: null,
    externalId: null,
  };
  let stored;
  try {
    stored = await deps.store.insertEvent({
      provider: provider.name,
      family: 'webhook',
      event_type: eventType,
      external_id: externalId,
      trust_mode: verifier.trustMode,
      verified: verifier.trustMode === 'signed',
      // Verified, but only that switchboard made it: say so wherever the detail is shown.
      verify_detail: discordTest ? DISCORD_TEST_DETAIL : verification.detail,
      content_type: delivery.headers['content-type'] ?? null,
      headers: sanitizeHeaders(delivery.rawHeaders, deps.providers.allSecrets()),
      payload: delivery.rawBody,
      source_ip: delivery.sourceIp,
      origin: delivery.test ? 'test' : 'provider',
    });
  } catch (error) {
    if (error instanceof JournalFullError) {
      // Backpressure, not a failure: the sender retries after a second (logged once per burst by the journal).
      return { ...errorAnswer(503, 'storage_busy', `${error.message}; ${error.hint}`), headers: { 'retry-after': String(error.retryAfterS) } };
    }
    deps.logger.error(`storing a delivery to "${provider.name}" failed: ${(error as Error).message}`);
    const message = isSwitchboardError(error) ? error.message : 'the event store is unavailable';
    return errorAnswer(503, 'storage_unavailable', `${message}; the sender should retry`);
  }

  // Announced once a read can find it, with its final id (the answer may go first).
  const announced = stored;
  void stored.visible.then((visible) => visible && deps.bus.emit(announced.duplicate ? 'duplicate' : 'event', announced.event));
  delivery.test?.stored(stored.event);

  const handshake = attempt(deps, provider, 'answering the handshake of', () => verifier.handshake?.(delivery) ?? null);
  // Handshakes are answered as the scheme requires, whatever the rules (DESIGN §15).
  if (handshake) return { status: handshake.status ?? 200, body: handshake.body, contentType: handshake.contentType };
  const normal = json(200, { id: stored.event.id, duplicate: stored.duplicate });
  return answerAttempt(deps, provider, stored, eventType, delivery.rawBody, normal);
}

/**
 * The answer rules' turn (DESIGN §15), once the delivery is stored: which attempt of its identity
 * this is, whether a rule decides its answer, and the attempt's row (written after the answer).
 */
async function answerAttempt(
  deps: IngestDeps,
  provider: WebhookProvider,
  stored: InsertResult,
  eventType: string | null,
  payload: Uint8Array,
  normal: Answer,
): Promise<Answer> {
  const rules = provider.config.answer;
  if (!stored.duplicate) deps.attempts?.first(stored.event.id);
  if (!deps.attempts || (!stored.duplicate && !rules?.length)) return normal;
  let number = 1;
  if (stored.duplicate) {
    try {
      number = await deps.attempts.next(stored.event, stored.visible);
    } catch (error) {
      deps.logger.error(`counting the attempts of event ${stored.event.id}: ${(error as Error).message}`);
      return normal;
    }
  }
  const decision = deps.answers?.decide(provider.name, rules, { eventType, payload, attempt: number }) ?? null;
  const answer = decision ? ruleAnswer(provider, decision, stored.event.id) : normal;
  const row = { event_id: stored.event.id, attempt: number, at: new Date().toISOString(), status: answer.status, rule: decision?.number ?? null, delay_ms: answer.delayMs ?? 0 };
  if (stored.duplicate || decision) deps.attempts.record(row, stored.visible);
  if (decision) {
    const event = { ...stored.event, attempts: number };
    void stored.visible.then((visible) => visible && deps.bus.emit('answered', { event, ...row }));
  }
  return answer;
}

/** What a rule answers: its status, headers and body; without a body, the normal JSON (2xx) or an error naming the rule. */
function ruleAnswer(provider: WebhookProvider, decision: AnswerDecision, eventId: number): Answer {
  const { rule, number } = decision;
  const ok = rule.status < 300;
  const body =
    rule.body ??
    JSON.stringify(
      ok ? { id: eventId, duplicate: false } : { error: 'answer_rule', hint: `answered ${rule.status} by answer rule ${number} of provider "${provider.name}" (config.json)` },
    );
  const headers = Object.fromEntries(Object.entries(rule.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const contentType = headers['content-type'] ?? (rule.body === undefined || looksLikeJson(rule.body) ? 'application/json' : 'text/plain; charset=utf-8');
  delete headers['content-type'];
  // The sender of a test event learns the answer was a rule's, not a failure (test-events/send.ts).
  headers[ANSWER_RULE_HEADER] = String(number);
  return { status: rule.status, body, contentType, headers, ...(rule.delay_ms > 0 ? { delayMs: rule.delay_ms } : {}) };
}

function looksLikeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Verification must end in a verdict whatever the bytes: a verifier that throws on some body
 * (a bug of ours) fails closed — the delivery is refused and recorded like any forgery, and the
 * error is logged — instead of escaping as a 500 that leaves no rejection row.
 */
function verifySafely(deps: IngestDeps, provider: WebhookProvider, delivery: IncomingDelivery): Verification {
  try {
    // Discord test events are signed with this process's test key (Discord's private key is Discord's).
    const discordTest = delivery.test && provider.verifier.kind === 'discord';
    return provider.verifier.verify(delivery, {
      secrets: provider.secrets,
      toleranceS: provider.toleranceS,
      publicKey: discordTest ? delivery.test!.discordPublicKey : provider.config.public_key,
    });
  } catch (error) {
    deps.logger.error(`verifying a delivery to "${provider.name}" failed: ${(error as Error).message}`);
    return {
      ok: false,
      reason: 'verification_failed',
      hint: 'switchboard could not check this delivery (an internal error, see its log) and refused it rather than accept it unchecked',
    };
  }
}

/** Normalizing an already verified delivery is best effort: an odd body is still stored. */
function attempt<T>(deps: IngestDeps, provider: WebhookProvider, what: string, run: () => T): T | null {
  try {
    return run();
  } catch (error) {
    deps.logger.error(`${what} a delivery to "${provider.name}" failed: ${(error as Error).message}`);
    return null;
  }
}
