/**
 * Replay (DESIGN §7): re-POST a stored event's raw bytes to a local consumer, re-signed so the
 * consumer's own signature check passes. The one entry point for the UI, MCP and forward rules.
 *
 * What goes out is built from an allow-list, never from the stored headers as a whole: the
 * content type and the provider's routing headers (event type, delivery id), plus
 * `user-agent: switchboard-replay/<version>` and `x-switchboard-replay: <event id>`. Host,
 * credentials, cookies and every stored (stale, redacted) signature stay behind. Where the
 * request goes is decided by target-guard.ts; redirects are never followed.
 *
 * Nothing about re-signing is silent: a caller's own value for a signature header that
 * re-signing would overwrite is refused (send it with `resign: false`), and a re-sign that was
 * asked for but cannot happen (provider removed, no secret, a scheme switchboard cannot sign)
 * goes out unsigned with a `warning` on the result and the stored row. Re-signing an imported
 * event carries a warning too: this instance never verified those bytes, and a fresh signature
 * makes the handler accept them as the provider's.
 *
 * Without a target the replay goes where replay-target.ts says (the provider's forward target,
 * the event's last target, replay.default_target), the same choice the UI shows before sending.
 */
import type { LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import type { EventBus } from '../bus.js';
import type { Config } from '../config.js';
import { checkOverrideValue, setPath } from '../dot-path.js';
import { eventNotFound, SwitchboardError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ProviderSet, WebhookProvider } from '../provider-set.js';
import { sanitizeHeaders, scrubSecrets } from '../redact.js';
import type { EventRecord, ReplayRecord } from '../store/types.js';
import type { EventStore } from '../store/event-store.js';
import { MAX_RESPONSE_BODY_BYTES, REDACTED, type Replay } from '../../shared/events.js';
import { chooseReplayTarget, type ReplayTargetSource } from '../../shared/replay-target.js';
import { idempotencyVerdict, seededRandom, type ChaosProfile, type IdempotencyVerdict } from '../../shared/delivery-lab.js';
import { forwardTargets } from './forward-targets.js';
import { checkTargetHost, guardedConnector, TargetRefusedError, type GuardedConnectorOptions } from './target-guard.js';

export interface ReplayRequest {
  eventId: number;
  /** Defaults to the provider's forward target, the event's last target, then `replay.default_target`. */
  targetUrl?: string;
  /** Defaults to `replay.resign`. */
  resign?: boolean;
  /** Edited body to send instead of the stored one. */
  payload?: Uint8Array;
  /** Dot path → JSON value, set in the (stored or edited) JSON body, or form fields by name. */
  overrides?: Record<string, unknown>;
  /** Applied on top of the replay headers; an empty value removes a header. */
  headers?: Record<string, string>;
  requestedBy: Replay['requested_by'];
  /** Duplicates and delay (DESIGN §15): the copies are sent after the first, each re-signed afresh. */
  chaos?: ChaosProfile;
  /**
   * Runs once the replay is known to be sendable, right before it is sent; throwing stops it.
   * Rate limits use it, so a call refused as not_found or invalid_argument costs nothing.
   */
  beforeSend?: () => void;
}

export interface ReplayEngineDeps {
  store: EventStore;
  bus: EventBus;
  providers: ProviderSet;
  config: () => Config;
  version: string;
  now: () => number;
  logger: Logger;
  /** DNS for target names (default: the system resolver); tests inject a rebinding one. */
  lookup?: LookupFunction;
}

/** A replay ready to send: the target passed the static guard, the headers are built. */
export interface PreparedReplay {
  event: EventRecord;
  targetUrl: string;
  /** Why this target: the caller's, or the default chosen for them. */
  targetSource: ReplayTargetSource;
  body: Buffer;
  headers: Record<string, string>;
  resigned: boolean;
  requestedBy: Replay['requested_by'];
  /** The caller sent other bytes than the stored ones. */
  payloadEdited: boolean;
  /** Lowercased names of the headers the caller set or removed. */
  headersOverridden: string[];
  /** Why re-signing, though asked for, did not happen. */
  warning: string | null;
  /** What a chaos profile made this send (DESIGN §15). */
  chaos?: ReplayRecord['chaos'];
}

/** A replay's row, with the copies a chaos profile sent after it and their verdict. */
export type ChaosReplayRecord = ReplayRecord & { copies?: ReplayRecord[]; idempotency?: IdempotencyVerdict | null };

/**
 * What a chaos profile decides for one event: the delay before it, and how many duplicates follow.
 * Draws in a fixed order (delay, then duplicate), so the same seed gives the same decisions.
 */
export function chaosPlan(chaos: ChaosProfile, random: () => number): { delayMs: number; copies: number; afterMs: number } {
  const range = chaos.delay_ms;
  const delayMs = range ? Math.round(range.min + random() * (range.max - range.min)) : 0;
  const duplicate = chaos.duplicate;
  const copies = duplicate && random() < duplicate.probability ? duplicate.copies : 0;
  return { delayMs, copies, afterMs: duplicate?.after_ms ?? 0 };
}

export const REPLAY_MARKER_HEADER = 'x-switchboard-replay';

/** Set by switchboard on every replay; never taken from a caller's overrides. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

export class ReplayEngine {
  private readonly agent: Agent;
  private readonly inFlight = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  private closed = false;

  constructor(private readonly deps: ReplayEngineDeps) {
    this.agent = guardedAgent({
      allowHosts: () => deps.config().replay.allow_hosts,
      connectTimeoutMs: () => deps.config().replay.timeout_ms,
      ...(deps.lookup ? { lookup: deps.lookup } : {}),
    });
  }

  /**
   * Replays one event. Resolves with the stored `replays` row whenever a delivery was attempted
   * (a downstream 500 is `delivered: true`; refused/timeout is `delivered: false` with `error`).
   * Rejects with `not_found` or `invalid_argument` (no target, bad URL, refused by the guard)
   * before any request is made.
   */
  async replay(request: ReplayRequest): Promise<ChaosReplayRecord> {
    const prepared = await this.prepare(request);
    request.beforeSend?.();
    if (request.chaos) return this.replayWithChaos(request, prepared, request.chaos, null);
    const outcome = await this.deliver(prepared);
    if (outcome instanceof TargetRefusedError) {
      throw new SwitchboardError('invalid_argument', `replay target refused: ${outcome.message}`, { hint: outcome.hint });
    }
    return outcome;
  }

  /**
   * A replay under a chaos profile: a delay drawn from its range before the first send, then
   * its duplicates, `after_ms` apart — each prepared again, so each carries a fresh signature
   * and timestamp and the same delivery id headers (what a provider's own redelivery looks
   * like). The result is the first send's row with the copies and the idempotency verdict.
   */
  async replayWithChaos(request: ReplayRequest, first: PreparedReplay, chaos: ChaosProfile, mark: 'reordered' | null, random?: () => number): Promise<ChaosReplayRecord> {
    const plan = chaosPlan(chaos, random ?? seededRandom(chaos.seed ?? Math.floor(Math.random() * 2 ** 32)));
    if (plan.delayMs > 0) await this.pause(plan.delayMs);
    const sent = await this.deliver({ ...(plan.delayMs > 0 ? await this.prepare(request) : first), chaos: plan.delayMs > 0 ? 'delayed' : mark });
    if (sent instanceof TargetRefusedError) {
      throw new SwitchboardError('invalid_argument', `replay target refused: ${sent.message}`, { hint: sent.hint });
    }
    const copies: ReplayRecord[] = [];
    for (let copy = 0; copy < plan.copies; copy++) {
      await this.pause(plan.afterMs);
      const outcome = await this.deliver({ ...(await this.prepare(request)), chaos: 'duplicate' });
      if (outcome instanceof TargetRefusedError) break;
      copies.push(outcome);
    }
    if (plan.copies === 0) return sent;
    return { ...sent, copies, idempotency: idempotencyVerdict([sent, ...copies].map((row) => (row.delivered ? row.response_status : null))) };
  }

  private pause(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    this.assertOpen();
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** Replay history of one event, newest first. */
  history(eventId: number): Promise<ReplayRecord[]> {
    return this.deps.store.listReplays(eventId);
  }

  /** The target a replay of this event goes to when the caller names none (replay-target.ts). */
  private async defaultTarget(event: EventRecord): Promise<{ url: string; source: ReplayTargetSource }> {
    const replayConfig = this.deps.config().replay;
    const forward = forwardTargets(this.deps.providers.config(event.provider));
    // The history is read only when no forward rule decides it.
    const lastTarget = forward.length > 0 ? null : ((await this.deps.store.listReplays(event.id, 1))[0]?.target_url ?? null);
    const choice = chooseReplayTarget({ forwardTargets: forward, lastTarget, defaultTarget: replayConfig.default_target ?? null });
    if (choice === null) {
      throw new SwitchboardError(
        'invalid_argument',
        `no replay target for event ${event.id}: give one (target_url; --to on the command line), add a forward rule (forward_to) to provider "${event.provider}", or set replay.default_target`,
        { hint: 'e.g. http://localhost:3000/webhooks (Settings → Replay → default target)' },
      );
    }
    return { url: parseTarget(choice.url, replayConfig.allow_hosts), source: choice.source };
  }

  async prepare(request: ReplayRequest): Promise<PreparedReplay> {
    this.assertOpen();
    const { config, store, providers } = this.deps;
    if (!Number.isSafeInteger(request.eventId) || request.eventId < 1) {
      throw new SwitchboardError('invalid_argument', `event id must be a positive integer, got ${String(request.eventId)}`);
    }
    const replayConfig = config().replay;
    // A target the caller typed is checked first: a bad URL is the answer whatever the event.
    const given = request.targetUrl !== undefined && request.targetUrl.trim() !== '' ? parseTarget(request.targetUrl, replayConfig.allow_hosts) : undefined;
    const event = await store.getEvent(request.eventId);
    if (!event) throw eventNotFound(request.eventId);
    const { url: target, source: targetSource } = given !== undefined ? { url: given, source: 'given' as const } : await this.defaultTarget(event);

    const built = buildReplay(event, providers.webhook(event.provider), {
      targetUrl: target,
      resign: request.resign ?? replayConfig.resign,
      ...(request.payload !== undefined ? { payload: request.payload } : {}),
      ...(request.overrides !== undefined ? { overrides: request.overrides } : {}),
      ...(request.headers !== undefined ? { headers: request.headers } : {}),
      version: this.deps.version,
      now: this.deps.now,
    });
    return { event, targetUrl: target, targetSource, requestedBy: request.requestedBy, ...built };
  }

  /**
   * Sends a prepared replay and records the attempt. Returns the stored row, or the guard's
   * refusal when the connect-time check stopped it (then nothing was sent and nothing stored).
   */
  async deliver(prepared: PreparedReplay): Promise<ReplayRecord | TargetRefusedError> {
    this.assertOpen();
    const controller = new AbortController();
    const done = this.sendAndRecord(prepared, controller);
    // close() waits for the row too, so it is written before the database closes.
    const entry = { controller, done: done.catch(() => undefined) };
    this.inFlight.add(entry);
    try {
      return await done;
    } finally {
      this.inFlight.delete(entry);
    }
  }

  /** Records an attempt that never got as far as a request (a forward dropped or refused). */
  recordFailure(eventId: number, targetUrl: string, error: string, requestedBy: Replay['requested_by']): Promise<ReplayRecord> {
    return this.record({
      event_id: eventId,
      target_url: targetUrl,
      resigned: false,
      delivered: false,
      response_status: null,
      response_ms: null,
      response_headers: null,
      response_body: null,
      error,
      requested_by: requestedBy,
    });
  }

  /** Aborts replays in flight (they are recorded as failed), then closes the connection pool. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.inFlight];
    for (const { controller } of pending) controller.abort(new Error('switchboard is stopping'));
    await Promise.all(pending.map((entry) => entry.done));
    await this.agent.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new SwitchboardError('replay_failed', 'switchboard is stopping; replay not sent');
  }

  private async record(row: Parameters<EventStore['insertReplay']>[0]): Promise<ReplayRecord> {
    const stored = await this.deps.store.insertReplay(row);
    this.deps.bus.emit('replay', stored);
    return stored;
  }

  private async sendAndRecord(prepared: PreparedReplay, controller: AbortController): Promise<ReplayRecord | TargetRefusedError> {
    const outcome = await this.send(prepared, controller);
    if (outcome instanceof TargetRefusedError) return outcome;
    return this.record({
      ...outcome,
      event_id: prepared.event.id,
      target_url: prepared.targetUrl,
      resigned: prepared.resigned,
      requested_by: prepared.requestedBy,
      payload_edited: prepared.payloadEdited,
      headers_overridden: prepared.headersOverridden,
      // What went out, as the UI shows it: signatures and credentials «redacted».
      request_headers: sanitizeHeaders(prepared.headers, this.deps.providers.allSecrets()),
      warning: prepared.warning,
      chaos: prepared.chaos ?? null,
    });
  }

  private send(prepared: PreparedReplay, controller: AbortController): Promise<ReplayOutcome | TargetRefusedError> {
    return sendReplayRequest(prepared, {
      agent: this.agent,
      timeoutMs: this.deps.config().replay.timeout_ms,
      secrets: this.deps.providers.allSecrets(),
      controller,
    });
  }
}

/** What a replay is built from: a stored event, or a suite's copy of one (src/core/suites). */
export type ReplaySource = Pick<EventRecord, 'id' | 'provider' | 'trust_mode' | 'content_type' | 'headers' | 'payload'> & Partial<Pick<EventRecord, 'origin'>>;

export interface BuildReplayOptions {
  /** Already through the static guard (parseTarget). */
  targetUrl: string;
  resign: boolean;
  payload?: Uint8Array;
  /** Dot path → JSON value (ReplayRequest.overrides). */
  overrides?: Record<string, unknown>;
  headers?: Record<string, string>;
  version: string;
  now: () => number;
}

/**
 * The request a replay sends: the allow-listed headers, the caller's overrides, and a fresh
 * signature when one can be made. The one place a replay is signed, for the engine and for
 * suite runs (which send copies of events, in an instance or in CI without one).
 */
export function buildReplay(
  source: ReplaySource,
  provider: WebhookProvider | undefined,
  options: BuildReplayOptions,
): Pick<PreparedReplay, 'body' | 'headers' | 'resigned' | 'payloadEdited' | 'headersOverridden' | 'warning'> {
  const verifier = provider?.verifier;
  const wantResign = options.resign;
  const overrides = Object.entries(options.headers ?? {}).map(([name, value]) => [name.trim().toLowerCase(), value] as const);
  for (const [name, value] of overrides) checkOverride(name, value);
  if (wantResign && verifier?.sign) {
    // Re-signing computes these headers; a value of the caller's would be replaced unseen.
    const clash = overrides.find(([name]) => verifier.secretHeaders.includes(name));
    if (clash) {
      throw new SwitchboardError(
        'invalid_argument',
        `header ${clash[0]} carries the ${verifier.kind} signature, which re-signing computes: remove it, or turn re-signing off (resign: false) to send your own value`,
      );
    }
  }

  const stored = Buffer.from(source.payload);
  const contentType = source.content_type ?? source.headers['content-type'];
  let body: Buffer = options.payload === undefined ? stored : Buffer.from(options.payload);
  if (options.overrides && Object.keys(options.overrides).length > 0) body = applyOverrides(body, contentType, options.overrides, source.id);
  const payloadEdited = !stored.equals(body);
  const headers: Record<string, string> = {};
  if (contentType) headers['content-type'] = contentType;
  for (const name of verifier?.replayHeaders ?? []) {
    const value = source.headers[name];
    if (value !== undefined && value !== REDACTED) headers[name] = value;
  }
  headers['user-agent'] = `switchboard-replay/${options.version}`;
  for (const [name, value] of overrides) {
    // A UI that echoes the stored headers back would send placeholders; they are never values.
    if (value === '' || value === REDACTED) delete headers[name];
    else headers[name] = value;
  }
  headers[REPLAY_MARKER_HEADER] = String(source.id);

  let resigned = false;
  let warning: string | null = null;
  const secret = provider?.secrets[0];
  if (wantResign && verifier?.sign && secret !== undefined) {
    const nowMs = options.now();
    // Drop every signature header of the scheme first (stale ones never go out).
    for (const name of verifier.secretHeaders) delete headers[name];
    if (verifier.refreshBody) body = verifier.refreshBody(body, nowMs);
    Object.assign(headers, verifier.sign({ body, secret, nowMs, headers, publicUrl: options.targetUrl }));
    resigned = true;
    if (source.origin === 'import') {
      warning = `re-signed an imported event: this instance never verified these bytes, and the fresh signature makes the handler accept them as ${source.provider}'s`;
    }
  } else if (wantResign && (source.trust_mode === 'signed' || source.trust_mode === 'token')) {
    warning = `not re-signed: ${whyNotResigned(source.provider, provider)}; the replay was sent without a fresh signature`;
  }
  const headersOverridden = [...new Set(overrides.map(([name]) => name).filter((name) => name !== REPLAY_MARKER_HEADER))];
  return {
    body,
    headers,
    resigned,
    payloadEdited,
    headersOverridden,
    warning,
  };
}

export interface SendReplayOptions {
  /** A dispatcher whose connections go through the guard (guardedAgent). */
  agent: Dispatcher;
  timeoutMs: number;
  /** Scrubbed from the response headers and body kept. */
  secrets: readonly string[];
  controller: AbortController;
  /**
   * Keep the connection for the next request instead of closing it. Only for an agent that
   * lives as long as one batch of requests to one checked target (a suite run): every
   * connection it opens still passes the connect-time guard.
   */
  keepAlive?: boolean;
  /** Reads the response body; by default its first MAX_RESPONSE_BODY_BYTES. */
  readBody?: (body: AsyncIterable<Buffer> & { destroy(): unknown }) => Promise<Uint8Array>;
}

/** An undici agent that connects only where the target guard allows (target-guard.ts). */
export function guardedAgent(options: GuardedConnectorOptions): Agent {
  return new Agent({ connect: guardedConnector(options) });
}

/**
 * POSTs a built replay and reads the answer. Resolves with the outcome (a non-2xx is delivered;
 * refused, timed out or cut off is not), or with the guard's refusal when the connect-time check
 * stopped it (then nothing was sent).
 */
export async function sendReplayRequest(
  prepared: Pick<PreparedReplay, 'targetUrl' | 'headers' | 'body'>,
  options: SendReplayOptions,
): Promise<ReplayOutcome | TargetRefusedError> {
  const { timeoutMs, controller } = options;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('replay timed out'));
  }, timeoutMs);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let status: number | null = null;
  let responseHeaders: Record<string, string> | null = null;
  try {
    const response = await request(prepared.targetUrl, {
      method: 'POST',
      dispatcher: options.agent,
      headers: prepared.headers,
      body: prepared.body,
      signal: controller.signal,
      // One connection per replay: each one goes through the connect-time guard.
      reset: options.keepAlive !== true,
    });
    status = response.statusCode;
    responseHeaders = sanitizeHeaders(response.headers, options.secrets);
    const read = await (options.readBody ?? ((stream) => readCapped(stream, MAX_RESPONSE_BODY_BYTES)))(response.body);
    // The handler's answer may echo a configured secret, in any encoding: scrubbed before anything keeps it.
    const body = scrubSecrets(read, options.secrets);
    return delivered(status, elapsed(), responseHeaders, body, null);
  } catch (error) {
    if (error instanceof TargetRefusedError) return error;
    const message = timedOut
      ? `no complete response within ${timeoutMs} ms (replay.timeout_ms)`
      : describeFailure(error, prepared.targetUrl);
    if (status !== null) return delivered(status, elapsed(), responseHeaders, null, `reading the response failed: ${message}`);
    return {
      delivered: false,
      response_status: null,
      response_ms: elapsed(),
      response_headers: null,
      response_body: null,
      error: message,
    };
  } finally {
    clearTimeout(timer);
  }
}

export type ReplayOutcome = Pick<ReplayRecord, 'delivered' | 'response_status' | 'response_ms' | 'response_headers' | 'response_body' | 'error'>;

function delivered(status: number, ms: number, headers: Record<string, string> | null, body: Uint8Array | null, error: string | null): ReplayOutcome {
  return { delivered: true, response_status: status, response_ms: ms, response_headers: headers, response_body: body, error };
}

/**
 * `overrides` set into the body (DESIGN §13's `--set path=value`): fields of a form body by
 * name, else dot paths into its JSON, which is then written out compactly — an edit, re-signed
 * over the new bytes. A body that is neither cannot take them.
 */
function applyOverrides(body: Buffer, contentType: string | undefined, overrides: Record<string, unknown>, eventId: number): Buffer {
  if (/^application\/x-www-form-urlencoded\b/i.test(contentType ?? '')) {
    const form = new URLSearchParams(body.toString('utf8'));
    for (const [name, value] of Object.entries(overrides)) {
      checkOverrideValue(name, value);
      form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    return Buffer.from(form.toString());
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new SwitchboardError('invalid_argument', `the payload of event ${eventId} is not JSON, so fields cannot be set in it (--set / overrides)`, {
      hint: 'send a whole edited payload instead (--payload FILE, or payload)',
    });
  }
  if (json === null || typeof json !== 'object') {
    throw new SwitchboardError('invalid_argument', `the payload of event ${eventId} is a JSON ${json === null ? 'null' : typeof json}, not an object: fields cannot be set in it`);
  }
  for (const [path, value] of Object.entries(overrides)) setPath(json as Record<string, unknown>, path, value);
  return Buffer.from(JSON.stringify(json));
}

/** Target URL → its canonical string, after the static guard. */
export function parseTarget(target: string, allowHosts: readonly string[]): string {
  const url = targetUrl(target);
  try {
    checkTargetHost(url.hostname, allowHosts);
  } catch (error) {
    if (error instanceof TargetRefusedError) {
      throw new SwitchboardError('invalid_argument', `replay target refused: ${error.message}`, { hint: error.hint });
    }
    throw error;
  }
  return url.href;
}

/** Target URL → URL (http or https, no credentials, no fragment), before the guard. */
export function targetUrl(target: string | null): URL {
  if (target === null || target.trim() === '') {
    throw new SwitchboardError('invalid_argument', 'no replay target: give one (target_url; --to on the command line) or set replay.default_target', {
      hint: 'e.g. http://localhost:3000/webhooks (Settings → Replay → default target)',
    });
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new SwitchboardError('invalid_argument', `the replay target is not a URL: ${JSON.stringify(target)}`, { hint: 'e.g. http://localhost:3000/webhooks' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SwitchboardError('invalid_argument', `replay targets must be http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new SwitchboardError('invalid_argument', 'the replay target must not carry credentials', { hint: 'pass an authorization header override instead' });
  }
  url.hash = '';
  return url;
}

/** Why a replay that was to be re-signed could not be, in the user's words. */
function whyNotResigned(providerName: string, provider: WebhookProvider | undefined): string {
  if (!provider) return `provider "${providerName}" is no longer configured, so there is no secret to sign with`;
  if (!provider.verifier.sign) return `${provider.verifier.kind} deliveries cannot be re-signed by switchboard (provider "${providerName}")`;
  return `provider "${providerName}" has no usable secret (check its secrets in config.json, or the environment variable they name)`;
}

function checkOverride(name: string, value: string): void {
  if (!HEADER_NAME.test(name)) throw new SwitchboardError('invalid_argument', `${JSON.stringify(name)} is not a valid header name`);
  if (/[\r\n\0]/.test(value)) throw new SwitchboardError('invalid_argument', `the value of header ${name} contains a line break or NUL`);
  // As HTTP (RFC 9110 field-value) and undici take them: tab, visible ASCII, space, and Latin-1
  // bytes — refused here, before a rate-limit token is spent, not in the HTTP client after.
  const bad = /[^\t\x20-\x7e\x80-\xff]/.exec(value);
  if (bad) {
    const code = bad[0].codePointAt(0)!;
    throw new SwitchboardError(
      'invalid_argument',
      `the value of header ${name} has ${code > 0xff ? `a character outside Latin-1 (U+${code.toString(16).toUpperCase().padStart(4, '0')})` : `a control character (0x${code.toString(16).padStart(2, '0')})`}: header values are tab, space, visible ASCII and Latin-1 bytes (percent-encode anything else)`,
    );
  }
  if (FRAMING_HEADERS.has(name)) {
    throw new SwitchboardError('invalid_argument', `header ${name} is set by the HTTP client and cannot be overridden`);
  }
}

/** The first `limit` bytes of a response; the rest is not read (the connection is dropped). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return new Uint8Array(Buffer.concat(chunks).subarray(0, limit));
}

/** A sentence for the replays row; never the request headers (they may carry a signature). */
function describeFailure(error: unknown, targetUrl: string): string {
  const origin = new URL(targetUrl).host;
  const code = (error as { code?: unknown }).code;
  const cause = (error as { cause?: { code?: unknown } }).cause?.code;
  switch (code ?? cause) {
    case 'ECONNREFUSED':
      return `connection refused by ${origin}: is the local consumer running?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve ${new URL(targetUrl).hostname}`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `${origin} closed the connection without a response`;
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `connecting to ${origin} timed out`;
    default:
      return `${(error as Error).message ?? String(error)}`;
  }
}
