import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { REDACTED } from '../../shared/events.js';
import { idempotencyVerdict, seededRandom, type ChaosProfile } from '../../shared/delivery-lab.js';
import type { Verdict } from '../../shared/suites.js';
import type { WebhookProvider } from '../provider-set.js';
import { buildReplay, chaosPlan, sendReplayRequest, type ReplaySource } from '../replay/replay.js';
import { checkTargetHost, TargetRefusedError } from '../replay/target-guard.js';
import type { CaseResultRecord } from '../store/suite-types.js';
import { ANSWER_BODY_BYTES, compareAnswers, learnNoise, type Answer, type CompareRules } from './compare.js';

/**
 * The run loop of a suite (DESIGN §14), the same in a running instance and in CI without one:
 * each case is re-signed and sent exactly as a replay is (buildReplay and sendReplayRequest of
 * src/core/replay, through an agent whose every connection passes the target guard), its answer
 * judged against the case's expectation, and the results handed on one step at a time.
 *
 * Cases are sent from the event loop, at most `concurrency` at once (1: one at a time, in
 * suite order); nothing here blocks on the database — storing a step's results overlaps the
 * sending of the next. What is sent when is decided in one place, the run's RunPlanner: with a
 * chaos profile (§15) it shuffles cases within windows, draws each case's delay and duplicates —
 * all in suite order, from one seeded random, so the same seed gives the same run whatever the
 * concurrency — and the workers only carry its decisions out.
 */

/** A case ready to send: the event's copy, where it stands in the suite, and its expectation. */
export interface RunCase extends ReplaySource {
  position: number;
  event_type: string | null;
  expectation: Answer | null;
}

export interface ProviderLookup {
  provider: WebhookProvider | undefined;
  /** Said on the case instead of the replay engine's own words (CI: "not in the --config file"). */
  warning?: string;
}

export interface RunOptions {
  /** Canonical URL (replay.ts targetUrl); the guard is run here and on every connection. */
  targetUrl: string;
  allowHosts: readonly string[];
  timeoutMs: number;
  /** 1–32. */
  concurrency: number;
  /** Send every case twice and learn what differs (the run becomes the expectation). */
  learnNoise: boolean;
  /** Reordering, delays and duplicates (DESIGN §15), its seed given or drawn by the caller (recorded on the run). */
  chaos?: (ChaosProfile & { seed: number }) | null;
  rules: CompareRules;
  /**
   * Made for this run alone (guardedAgent) and closed after it: its connections are kept between
   * cases — a connection per case costs more than the rest of the run — and each one it opens
   * passes the connect-time guard.
   */
  agent: Dispatcher;
  version: string;
  now: () => number;
  secrets: () => readonly string[];
  provider: (source: RunCase) => ProviderLookup;
  signal?: AbortSignal;
  /** Each case as it finishes (progress). */
  onCase?: (outcome: CaseOutcome) => void;
  /** A step's results, in case order; the next step is sent meanwhile (awaited before the next call). */
  onStep: (results: CaseOutcome[]) => Promise<void> | void;
}

/** A case's result as stored (CaseResultRecord) plus the noise its two sends showed. */
export interface CaseOutcome extends CaseResultRecord {
  learned: string[];
}

export interface RunTotals {
  counts: Record<Verdict, number>;
  done: number;
  learnedIgnores: string[];
  /** Cases not sent because the run was cancelled. */
  cancelled: boolean;
}

/** What one case's sends look like in a run. */
export interface PlannedCase {
  /** 2 when the run learns noise: sent twice, back to back. */
  sends: number;
  /** What the chaos profile decided for it; null without one. */
  chaos: PlannedChaos | null;
}

export interface PlannedChaos {
  /** Its place in the order the run sends the cases, from 1. */
  sentOrder: number;
  /** Sent out of its suite position (its reorder window was shuffled). */
  reordered: boolean;
  /** Waited before its first send. */
  delayMs: number;
  /** Duplicates sent after it, `afterMs` apart. */
  copies: number;
  afterMs: number;
}

/**
 * Decides what a run sends when (DESIGN §14, §15), made once per run: cases go in (`take`, a
 * step at a time, in suite order) and come out in the order to send them, each with its sends.
 * With `reorder_window` N the cases are held until a window of N (by suite position, across
 * steps) is complete, then shuffled; `finish` gives the last, shorter window. Every draw is made
 * here, in a fixed order — a window's shuffle, then each of its cases' delay and duplicates in
 * suite order — so the same seed gives the same decisions however the cases are paged or sent.
 */
export class RunPlanner<T> {
  private readonly random: (() => number) | null;
  private held: T[] = [];
  private sent = 0;

  /** Cases waiting for the rest of their reorder window. */
  get holding(): boolean {
    return this.held.length > 0;
  }

  constructor(private readonly options: { learnNoise: boolean; chaos?: (ChaosProfile & { seed: number }) | null }) {
    this.random = options.chaos ? seededRandom(options.chaos.seed) : null;
  }

  take(items: readonly T[]): { item: T; planned: PlannedCase }[] {
    const window = this.options.chaos?.reorder_window ?? 1;
    const out: { item: T; planned: PlannedCase }[] = [];
    for (const item of items) {
      this.held.push(item);
      if (this.held.length >= window) out.push(...this.release());
    }
    return out;
  }

  /** The end of the suite: the cases still held, as a last window. */
  finish(): { item: T; planned: PlannedCase }[] {
    return this.held.length > 0 ? this.release() : [];
  }

  private release(): { item: T; planned: PlannedCase }[] {
    const batch = this.held;
    this.held = [];
    const sends = this.options.learnNoise ? 2 : 1;
    const chaos = this.options.chaos;
    if (!chaos || !this.random) return batch.map((item) => ({ item, planned: { sends, chaos: null } }));
    const order = batch.length > 1 && chaos.reorder_window !== undefined ? shuffle(batch.length, this.random) : batch.map((_, index) => index);
    const plans = batch.map(() => chaosPlan(chaos, this.random!));
    return order.map((from, at) => ({
      item: batch[from]!,
      planned: { sends, chaos: { sentOrder: ++this.sent, reordered: from !== at, delayMs: plans[from]!.delayMs, copies: plans[from]!.copies, afterMs: plans[from]!.afterMs } },
    }));
  }
}

/** Fisher–Yates over 0…count-1 (the same draws as forward rules' reordering). */
function shuffle(count: number, random: () => number): number[] {
  const out = Array.from({ length: count }, (_, index) => index);
  for (let index = out.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [out[index], out[other]] = [out[other]!, out[index]!];
  }
  return out;
}

const REDACTED_BYTES = Buffer.from(REDACTED);

/** A handler answering more than this is cut off; what was read is hashed and compared. */
export const MAX_ANSWER_READ_BYTES = 32 * 1024 * 1024;

/** Steps read ahead of the one being sent, and steps sent but not yet stored, at most. */
const STEPS_AHEAD = 1;
const STEPS_UNSTORED = 2;

interface StepState {
  outcomes: (CaseOutcome | undefined)[];
  left: number;
}

/**
 * Runs every case of `steps` (pages of cases, in suite order). The guard's static check runs
 * once: a refused target fails every case with the cause, and nothing is sent.
 *
 * The workers never wait for a step to end: the next step is read while this one is sent, and
 * a finished step is stored (onStep, in order) while later ones are sent. Reading ahead and
 * storing behind are bounded (STEPS_AHEAD, STEPS_UNSTORED), so memory does not grow with the
 * suite, and a slow database slows the run instead of piling answers up.
 */
export async function runCases(steps: AsyncIterable<RunCase[]> | Iterable<RunCase[]>, options: RunOptions): Promise<RunTotals> {
  const totals: RunTotals = { counts: { new: 0, pass: 0, changed: 0, failed: 0 }, done: 0, learnedIgnores: [], cancelled: false };
  const learned = new Set<string>();
  let refused: TargetRefusedError | null = null;
  try {
    checkTargetHost(new URL(options.targetUrl).hostname, options.allowHosts);
  } catch (error) {
    if (!(error instanceof TargetRefusedError)) throw error;
    refused = error;
  }
  const iterator = Symbol.asyncIterator in steps ? steps[Symbol.asyncIterator]() : steps[Symbol.iterator]();
  const planner = new RunPlanner<{ step: StepState; source: RunCase; index: number }>({ learnNoise: options.learnNoise, chaos: options.chaos ?? null });
  const queue: { item: { step: StepState; source: RunCase; index: number }; planned: PlannedCase }[] = [];
  const sending: StepState[] = [];
  let exhausted = false;
  let loading: Promise<void> | null = null;
  let unstored = 0;
  let stored = Promise.resolve();
  /** The first failure to read or store a step: the run stops there. */
  let storeFailed: unknown = null;
  let storedOne: (() => void) | null = null;
  /** Workers with nothing to take, woken when a case ends or a step is read. */
  const idle: (() => void)[] = [];
  const wake = () => idle.splice(0).forEach((resolve) => resolve());

  const flushFinished = () => {
    while (sending[0] && sending[0].left === 0) {
      const outcomes = sending.shift()!.outcomes.filter((outcome) => outcome !== undefined);
      unstored++;
      stored = stored
        .then(() => options.onStep(outcomes))
        .catch((error: unknown) => void (storeFailed ??= error))
        .finally(() => {
          unstored--;
          storedOne?.();
        });
    }
    wake();
  };
  const load = async () => {
    while (unstored >= STEPS_UNSTORED && storeFailed === null) await new Promise<void>((resolve) => (storedOne = resolve));
    const next = await iterator.next();
    if (next.done) {
      queue.push(...planner.finish());
      exhausted = true;
      return;
    }
    const step: StepState = { outcomes: new Array(next.value.length), left: next.value.length };
    sending.push(step);
    queue.push(...planner.take(next.value.map((source, index) => ({ step, source, index }))));
    flushFinished();
  };
  const take = async () => {
    for (;;) {
      if (options.signal?.aborted || storeFailed !== null) return null;
      // An empty queue reads on whatever is ahead: the planner may hold a reorder window's first cases until its last are read.
      if (!exhausted && !loading && (sending.length <= STEPS_AHEAD || (queue.length === 0 && planner.holding))) {
        // A case that cannot be read ends the run like a step that cannot be stored.
        loading = load()
          .catch((error: unknown) => void ((storeFailed ??= error), (exhausted = true)))
          .finally(() => (loading = null));
      }
      const item = queue.shift();
      if (item) return item;
      if (exhausted && !loading) return null;
      // Nothing to read yet (the steps ahead are in flight): wait for a case to end rather than spin.
      await (loading ?? new Promise<void>((resolve) => idle.push(resolve)));
    }
  };
  const worker = async () => {
    for (let next = await take(); next; next = await take()) {
      const { item, planned } = next;
      const outcome = await runCase(item.source, planned, options, refused);
      item.step.left--;
      // Cancelled while it waited its chaos delay: not sent, not a result.
      if (outcome === null) {
        flushFinished();
        continue;
      }
      item.step.outcomes[item.index] = outcome;
      totals.counts[outcome.verdict]++;
      totals.done++;
      for (const path of outcome.learned) learned.add(path);
      options.onCase?.(outcome);
      flushFinished();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  // A cancelled run still stores what it got: the steps cut short, as far as they went.
  for (const step of sending) step.left = 0;
  flushFinished();
  await stored;
  if (storeFailed !== null) throw storeFailed;
  totals.cancelled = options.signal?.aborted === true;
  totals.learnedIgnores = [...learned];
  return totals;
}

interface Sent {
  answer: Answer | null;
  ms: number | null;
  error: string | null;
  resigned: boolean;
  warning: string | null;
}

async function runCase(source: RunCase, planned: PlannedCase, options: RunOptions, refused: TargetRefusedError | null): Promise<CaseOutcome | null> {
  const facts = planned.chaos ? { sent_order: planned.chaos.sentOrder, reordered: planned.chaos.reordered, delay_ms: 0, duplicates: [] as (number | null)[] } : null;
  const base = { position: source.position, provider: source.provider, event_type: source.event_type, expected_status: source.expectation?.status ?? null, learned: [] as string[], idempotency: null, chaos: facts };
  if (refused) {
    return { ...base, verdict: 'failed', resigned: false, answer: null, response_ms: null, diff: [], diff_truncated: false, reason: `refused by the target guard, nothing sent: ${refused.message} (${refused.hint})`, warning: null };
  }
  if (planned.chaos && planned.chaos.delayMs > 0) {
    if (!(await pause(planned.chaos.delayMs, options.signal))) return null;
    facts!.delay_ms = planned.chaos.delayMs;
  }
  const first = await send(source, options);
  const warnings = [first.warning];
  let rules = options.rules;
  const learned: string[] = [];
  if (first.answer && planned.sends > 1) {
    const second = await send(source, options);
    if (!second.answer) {
      warnings.push(`the second send, to learn noise, got no answer (${second.error ?? 'no response'}): nothing learned for this case`);
    } else {
      if (second.answer.status !== first.answer.status) {
        warnings.push(`the same request sent again got ${second.answer.status} (first ${first.answer.status}): the handler answers a repeated delivery differently`);
      }
      const noise = learnNoise(first.answer, second.answer, rules.ignore);
      if (noise.warning) warnings.push(noise.warning);
      if (noise.paths.length > 0) {
        learned.push(...noise.paths);
        rules = { ...rules, ignore: rules.ignore.with(noise.paths) };
      }
    }
  }
  // Chaos duplicates (§15): each re-signed afresh, the event's delivery-id headers kept; the comparison is the first send's alone.
  const copies: Sent[] = [];
  for (let copy = 0; copy < (planned.chaos?.copies ?? 0); copy++) {
    if (!(await pause(planned.chaos!.afterMs, options.signal))) break;
    const sent = await send(source, options);
    copies.push(sent);
    facts!.duplicates.push(sent.answer?.status ?? null);
  }
  const idempotency = copies.length > 0 ? idempotencyVerdict([first.answer?.status ?? null, ...copies.map((copy) => copy.answer?.status ?? null)]) : null;
  const notIdempotent = idempotency === 'not_idempotent' ? idempotencyReason(first.answer!.status, copies) : null;
  const warning = warnings.filter((text) => text !== null).join('; ') || null;
  const sent = { resigned: first.resigned, answer: first.answer, response_ms: first.ms, warning, idempotency };
  const join = (...notes: (string | null)[]) => notes.filter((note) => note !== null).join('; ') || null;
  if (!first.answer) return { ...base, ...sent, verdict: 'failed', diff: [], diff_truncated: false, reason: first.error ?? 'no answer', learned };
  if (!source.expectation) {
    const note = first.answer.size > ANSWER_BODY_BYTES ? 'a body over 64 KiB is compared by size and SHA-256 beyond the first 64 KiB kept' : null;
    return { ...base, ...sent, verdict: notIdempotent ? 'changed' : 'new', diff: [], diff_truncated: false, reason: join(notIdempotent, note), learned };
  }
  const comparison = compareAnswers(source.expectation, first.answer, rules);
  return {
    ...base,
    ...sent,
    verdict: comparison.count === 0 && !notIdempotent ? 'pass' : 'changed',
    diff: comparison.differences,
    diff_truncated: comparison.truncated,
    reason: join(notIdempotent, comparison.note),
    learned,
  };
}

/** "not idempotent: the first send got 200, duplicate 1 got 409 — …", naming the first duplicate that was not a 2xx. */
function idempotencyReason(firstStatus: number, copies: readonly Sent[]): string {
  const index = copies.findIndex((copy) => copy.answer === null || copy.answer.status < 200 || copy.answer.status > 299);
  const copy = copies[index]!;
  const got = copy.answer ? `got ${copy.answer.status}` : `got no answer (${copy.error ?? 'no response'})`;
  return `not idempotent: the first send got ${firstStatus}, duplicate ${index + 1} ${got} — a provider would keep retrying or disable the endpoint`;
}

/** Waits `ms`; false when the run was cancelled meanwhile. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One send of a case: signed as a replay is, through the guarded agent. */
async function send(source: RunCase, options: RunOptions): Promise<Sent> {
  const lookup = options.provider(source);
  const built = buildReplay(source, lookup.provider, { targetUrl: options.targetUrl, resign: true, version: options.version, now: options.now });
  // The lookup's words say why better where it knows (CI: not in the --config file).
  const warning = built.warning === null ? null : (lookup.warning ?? built.warning);
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason ?? new Error('the run was cancelled'));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const capture = new BodyCapture(options.secrets());
  try {
    const outcome = await sendReplayRequest(
      { targetUrl: options.targetUrl, headers: built.headers, body: built.body },
      { agent: options.agent, keepAlive: true, timeoutMs: options.timeoutMs, secrets: options.secrets(), controller, readBody: (body) => capture.read(body) },
    );
    if (outcome instanceof TargetRefusedError) {
      return { answer: null, ms: null, error: `refused by the target guard, nothing sent: ${outcome.message} (${outcome.hint})`, resigned: built.resigned, warning };
    }
    if (!outcome.delivered || outcome.response_status === null || outcome.error !== null) {
      const error = options.signal?.aborted ? `not answered: ${(options.signal.reason as Error | undefined)?.message ?? 'the run was cancelled'}` : (outcome.error ?? 'no answer');
      return { answer: null, ms: outcome.response_ms, error, resigned: built.resigned, warning };
    }
    const answer: Answer = {
      status: outcome.response_status,
      headers: outcome.response_headers ?? {},
      body: capture.kept(),
      size: capture.size,
      sha256: capture.digest(),
    };
    const cut = capture.cut ? `the answer was longer than ${MAX_ANSWER_READ_BYTES} bytes: its first ${MAX_ANSWER_READ_BYTES} bytes were compared` : null;
    return { answer, ms: outcome.response_ms, error: null, resigned: built.resigned, warning: [warning, cut].filter(Boolean).join('; ') || null };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Reads a whole answer: keeps its first ANSWER_BODY_BYTES (with any configured secret in them
 * replaced by «redacted» — they are stored and shown), and hashes all of it, up to
 * MAX_ANSWER_READ_BYTES.
 */
class BodyCapture {
  private readonly hash = createHash('sha256');
  private readonly chunks: Buffer[] = [];
  private keptBytes = 0;
  private keptBody: Uint8Array | null = null;
  size = 0;
  cut = false;

  constructor(private readonly secrets: readonly string[]) {}

  async read(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Uint8Array> {
    for await (const chunk of body) {
      const room = MAX_ANSWER_READ_BYTES - this.size;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.hash.update(part);
      this.size += part.length;
      if (this.keptBytes < ANSWER_BODY_BYTES) {
        const keep = part.subarray(0, ANSWER_BODY_BYTES - this.keptBytes);
        this.chunks.push(Buffer.from(keep));
        this.keptBytes += keep.length;
      }
      if (this.size >= MAX_ANSWER_READ_BYTES) {
        this.cut = true;
        body.destroy();
        break;
      }
    }
    return this.kept();
  }

  /** The kept start of the body, secrets replaced. */
  kept(): Uint8Array {
    if (this.keptBody) return this.keptBody;
    let bytes = Buffer.concat(this.chunks);
    for (const secret of this.secrets) {
      const raw = Buffer.from(secret);
      if (secret.length < 8 || bytes.indexOf(raw) < 0) continue;
      const parts: Buffer[] = [];
      for (let at = bytes.indexOf(raw); at >= 0; at = bytes.indexOf(raw)) {
        parts.push(bytes.subarray(0, at), REDACTED_BYTES);
        bytes = bytes.subarray(at + raw.length);
      }
      bytes = Buffer.concat([...parts, bytes]);
    }
    this.keptBody = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return this.keptBody;
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
