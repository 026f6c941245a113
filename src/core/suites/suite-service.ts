import type { Agent } from 'undici';
import type { ApiParsedInput } from '../../shared/api.js';
import { chaosWithSeed, formatChaosSpec, type ChaosProfile } from '../../shared/delivery-lab.js';
import {
  SUITE_DEFAULT_CASES,
  SUITE_RUNS_KEPT,
  type BodyView,
  type CaseDetail,
  type CaseResult,
  type SuiteCase,
  type SuiteRun,
  type SuiteSummary,
} from '../../shared/suites.js';
import type { Config } from '../config.js';
import { cutBytes } from '../wire.js';
import { SwitchboardError } from '../errors.js';
import { exportedEvent } from '../export/event-lines.js';
import { ndjsonLines } from '../export/importer.js';
import type { Logger } from '../logger.js';
import type { ProviderSet } from '../provider-set.js';
import { sanitizeHeaders } from '../redact.js';
import { guardedAgent, targetUrl } from '../replay/replay.js';
import type { EventRecord, ExportFilter } from '../store/types.js';
import type { EventStore } from '../store/event-store.js';
import type { SuiteStore } from '../store/suites.js';
import type { CaseResultRecord, NewSuiteCase, SuiteCaseRecord, SuiteRecord, SuiteRunRecord } from '../store/suite-types.js';
import { learnNoise, type Answer } from './compare.js';
import { checkIgnorePatterns, IgnoreRules, MAX_IGNORES } from './json-paths.js';
import { runCases, type RunCase, type RunTotals } from './runner.js';
import { caseLine, headerLine, parseSuiteFile, SuiteFileError } from './suite-file.js';

/**
 * Suites in a running instance (DESIGN §14): saving them from stored events, running them
 * against a target, accepting a run as the expectation, and the suite file in and out. The UI
 * API, the CLI (through it) and MCP's run_suite call this; the SQL is src/core/store/suites.ts
 * and the run loop src/core/suites/runner.ts.
 *
 * A run goes on in the background once started (runSuite answers at once; getSuiteRun shows
 * its progress), one run per suite at a time; a suite cannot be changed while it runs. A run's
 * cases are read, sent and stored a step at a time, so neither its memory nor any one statement
 * grows with the suite.
 */

export interface SuiteServiceDeps {
  store: SuiteStore;
  events: EventStore;
  providers: ProviderSet;
  config: () => Config;
  version: string;
  now: () => number;
  logger: Logger;
}

/** Cases per step of a run: read, sent and stored together. */
export const RUN_STEP_CASES = 50;
const RUN_STEP_BYTES = 8 * 1024 * 1024;
/** What a saved suite may copy in all (payloads held while it is written). */
const MAX_SUITE_BYTES = 256 * 1024 * 1024;
const EVENT_BATCH_ROWS = 500;
const EVENT_BATCH_BYTES = 8 * 1024 * 1024;

export type SaveSuiteInput = ApiParsedInput<'saveSuite'>;

export interface StartRunOptions {
  targetUrl?: string;
  concurrency?: number;
  accept?: boolean;
  /** Reordering, delays and duplicates (DESIGN §15); a seed is drawn and recorded when it has none. */
  chaos?: ChaosProfile;
  requestedBy: string;
  /** Told as cases finish (MCP progress notifications). */
  onProgress?: (done: number, total: number) => void;
  /** Runs once the run is known to be startable; throwing stops it (MCP's rate limit). */
  beforeStart?: () => void;
}

interface ActiveRun {
  suiteId: number;
  done: number;
  controller: AbortController;
  finished: Promise<SuiteRun>;
}

export class SuiteService {
  private readonly active = new Map<number, ActiveRun>();
  private closing = false;

  constructor(private readonly deps: SuiteServiceDeps) {}

  /** Runs a stopped process left 'running' are marked interrupted. */
  async open(): Promise<void> {
    await this.deps.store.markInterrupted();
  }

  async list(): Promise<SuiteSummary[]> {
    const suites = await this.deps.store.listSuites();
    const last = await this.deps.store.lastRuns(suites.map((suite) => suite.id));
    return suites.map((suite) => this.summary(suite, last.get(suite.id) ?? null));
  }

  async get(name: string): Promise<{ suite: SuiteSummary; cases: SuiteCase[] }> {
    const suite = await this.requireSuite(name);
    const [cases, last] = await Promise.all([this.deps.store.caseSummaries(suite.id), this.deps.store.lastRuns([suite.id])]);
    return {
      suite: this.summary(suite, last.get(suite.id) ?? null),
      cases: cases.map(({ position, ...rest }) => ({ case: position, ...rest })),
    };
  }

  /**
   * Creates a suite, or replaces its cases (keeping its ignores, dropping its expectations) when
   * event ids or a filter are given; with neither, an existing suite only takes new rules.
   */
  async save(input: SaveSuiteInput): Promise<{ suite: SuiteSummary; created: boolean }> {
    const ignore = input.ignore === undefined ? undefined : checkIgnorePatterns(input.ignore);
    const compareHeaders = input.compare_headers?.map((name) => name.toLowerCase());
    const existing = await this.deps.store.suite(input.name);
    if (existing) this.assertIdle(existing);
    if (existing && input.event_ids === undefined && input.filter === undefined) {
      await this.deps.store.updateRules(existing.id, { ...(ignore ? { ignore } : {}), ...(compareHeaders ? { compareHeaders } : {}) });
      return { suite: (await this.get(input.name)).suite, created: false };
    }
    const events = input.event_ids !== undefined ? await this.eventsById(input.event_ids) : await this.eventsByFilter(input.filter ?? {});
    const cases = events.map((event) => this.caseOf(event));
    const { created } = await this.deps.store.saveSuite({
      name: input.name,
      cases,
      ...(ignore ? { ignore } : {}),
      ...(compareHeaders ? { compareHeaders } : {}),
    });
    return { suite: (await this.get(input.name)).suite, created };
  }

  async delete(name: string): Promise<void> {
    const suite = await this.requireSuite(name);
    this.assertIdle(suite);
    await this.deps.store.deleteSuite(name);
  }

  /**
   * Starts a run and answers at once with it ('running'); `finished` settles when every case
   * was sent and stored. Sends every case twice when the run becomes the expectation: the
   * suite's first (no expectations yet), or one made with `accept`.
   */
  async start(name: string, options: StartRunOptions): Promise<{ run: SuiteRun; finished: Promise<SuiteRun> }> {
    if (this.closing) throw new SwitchboardError('storage_unavailable', 'switchboard is stopping; the suite was not run');
    const suite = await this.requireSuite(name);
    this.assertIdle(suite);
    const target = await this.resolveTarget(suite, options.targetUrl);
    const learn = options.accept === true || suite.expectations === 0;
    const concurrency = options.concurrency ?? 1;
    const chaos = options.chaos ? chaosWithSeed(options.chaos) : null;
    options.beforeStart?.();
    const record = await this.deps.store.insertRun({ suiteId: suite.id, targetUrl: target, requestedBy: options.requestedBy, concurrency, total: suite.cases, chaos });
    const controller = new AbortController();
    const active: ActiveRun = { suiteId: suite.id, done: 0, controller, finished: undefined as unknown as Promise<SuiteRun> };
    active.finished = this.execute(suite, record, { learn, concurrency, chaos, controller, active, ...(options.onProgress ? { onProgress: options.onProgress } : {}) }).finally(() =>
      this.active.delete(record.id),
    );
    this.active.set(record.id, active);
    // A caller that never awaits it must not see an unhandled rejection; execute() logs its own failures.
    active.finished.catch(() => {});
    return { run: this.wireRun(record), finished: active.finished };
  }

  /** Asks a run in progress to stop; cases already sent keep their results. */
  cancel(runId: number): boolean {
    const active = this.active.get(runId);
    active?.controller.abort(new Error('the run was cancelled'));
    return active !== undefined;
  }

  async runs(name: string): Promise<SuiteRun[]> {
    const suite = await this.requireSuite(name);
    return (await this.deps.store.runs(suite.id, SUITE_RUNS_KEPT)).map((run) => this.wireRun(run));
  }

  /** A run with its cases (differences with `diffs`), and one case's bodies side by side with `position`. */
  async getRun(id: number, options: { cases?: boolean; diffs?: boolean; position?: number } = {}): Promise<{ run: SuiteRun; cases: CaseResult[]; detail?: CaseDetail }> {
    const run = await this.requireRun(id);
    // Following a run's progress reads its row alone, however many cases it has.
    if (options.cases === false && options.position === undefined) return { run: this.wireRun(run), cases: [] };
    const results = await this.deps.store.results(id);
    const cases = results.map((result) => toWireResult(result, options.diffs === true || result.position === options.position));
    if (options.position === undefined) return { run: this.wireRun(run, results.length), cases };
    const [withBody] = await this.deps.store.results(id, { bodies: true, position: options.position });
    if (!withBody) throw new SwitchboardError('not_found', `run ${id} has no case ${options.position} (it has ${results.length})`);
    const expected = await this.deps.store.expectation(run.suite_id, options.position);
    const secrets = this.deps.providers.allSecrets();
    return {
      run: this.wireRun(run, results.length),
      cases,
      detail: {
        case: options.position,
        expected: expected ? { status: expected.status, headers: expected.headers, body: bodyView(expected, secrets) } : null,
        got: withBody.answer ? { status: withBody.answer.status, headers: withBody.answer.headers, body: bodyView(withBody.answer, secrets) } : null,
      },
    };
  }

  /**
   * Makes a finished run's answers the expectation. Noise is learned as for a run made with
   * accept: every case that got an answer is sent once more to the run's target, and what
   * differs from the run's answer is ignored from then on.
   */
  async accept(runId: number): Promise<{ run: SuiteRun; learned_ignores: string[]; warning: string | null }> {
    const run = await this.requireRun(runId);
    if (this.active.has(runId) || run.status === 'running') {
      throw new SwitchboardError('invalid_argument', `run ${runId} is still running: wait for it, or run the suite with accept`);
    }
    const suite = await this.requireSuite(run.suite);
    this.assertIdle(suite);
    if (run.accepted) return { run: this.wireRun(run), learned_ignores: run.learned_ignores, warning: null };
    const answers = new Map((await this.deps.store.results(runId, { bodies: true })).filter((result) => result.verdict !== 'failed' && result.answer).map((result) => [result.position, result.answer!]));
    const known = new IgnoreRules(suite.ignore);
    const learned = new Set<string>();
    let unanswered = 0;
    let firstProblem: string | null = null;
    const config = this.deps.config();
    const agent = this.runAgent();
    await runCases(this.steps(suite.id, (position) => answers.has(position), { withExpectations: false }), {
      ...this.sendOptions(config, agent),
      targetUrl: run.target_url,
      concurrency: run.concurrency,
      learnNoise: false,
      rules: { ignore: known, compareHeaders: suite.compare_headers },
      onStep: (outcomes) => {
        for (const outcome of outcomes) {
          if (!outcome.answer) {
            unanswered++;
            firstProblem ??= outcome.reason;
            continue;
          }
          const noise = learnNoise(answers.get(outcome.position)!, outcome.answer, known);
          noise.paths.forEach((path) => learned.add(path));
          firstProblem ??= noise.warning;
        }
      },
    }).finally(() => agent.close());
    const { ignore, added, warning: full } = mergeIgnores(suite.ignore, [...learned]);
    await this.deps.store.acceptRun(runId, suite.id, ignore, added);
    const notes = [unanswered > 0 ? `noise could not be learned for ${unanswered} case${unanswered === 1 ? '' : 's'} (sent once more to ${run.target_url}): ${firstProblem}` : firstProblem, full].filter((note) => note !== null);
    return { run: this.wireRun((await this.deps.store.run(runId))!), learned_ignores: added, warning: notes.join('; ') || null };
  }

  /** The suite file (suite-file.ts): header, then one line per case with its expectation. */
  async exportFile(name: string): Promise<{ filename: string; ndjson: string }> {
    const suite = await this.requireSuite(name);
    const lines: string[] = [];
    const providers: Record<string, string> = {};
    for await (const step of this.caseRecords(suite.id)) {
      for (const record of step) {
        const kind = record.kind ?? this.deps.providers.config(record.provider)?.kind;
        if (kind) providers[record.provider] ??= kind;
        const { position, kind: _kind, source_event_id, expectation, ...event } = record;
        const exported = exportedEvent({ ...event, id: source_event_id ?? position, attempts: 1, drift: false });
        const { id: _id, ...withoutId } = exported;
        lines.push(caseLine(position, source_event_id === null ? withoutId : exported, expectation, suite.compare_headers));
      }
    }
    const header = headerLine({ switchboard_suite: 1, name: suite.name, providers, ignore: suite.ignore, compare_headers: suite.compare_headers });
    return { filename: `${suite.name}.suite.ndjson`, ndjson: `${[header, ...lines].join('\n')}\n` };
  }

  /** Reads a suite file into a suite (all or nothing); an existing one is replaced only with `replace`. */
  async importFile(ndjson: string, options: { replace: boolean }): Promise<{ suite: SuiteSummary; created: boolean }> {
    let file;
    try {
      file = await parseSuiteFile(ndjsonLines([ndjson], Number.MAX_SAFE_INTEGER));
    } catch (error) {
      if (error instanceof SuiteFileError) throw new SwitchboardError('invalid_argument', `the suite file is not valid: ${error.message}`);
      throw error;
    }
    const existing = await this.deps.store.suite(file.header.name);
    if (existing && !options.replace) {
      throw new SwitchboardError('invalid_argument', `a suite named "${file.header.name}" exists: import with replace to overwrite it, or rename the suite in line 1 of the file`);
    }
    if (existing) this.assertIdle(existing);
    const secrets = this.deps.providers.allSecrets();
    const expectations = new Map<number, Answer>();
    file.cases.forEach((entry, index) => entry.expectation && expectations.set(index + 1, entry.expectation));
    const { created } = await this.deps.store.saveSuite({
      name: file.header.name,
      // A file may come from anywhere: its headers are sanitized again with this instance's secrets.
      cases: file.cases.map((entry) => ({ ...entry.event, headers: sanitizeHeaders(entry.event.headers, secrets) })),
      ignore: file.header.ignore,
      compareHeaders: file.header.compare_headers,
      expectations,
    });
    return { suite: (await this.get(file.header.name)).suite, created };
  }

  /** Cancels runs in progress (they end 'interrupted'). */
  async close(): Promise<void> {
    this.closing = true;
    const running = [...this.active.values()];
    for (const run of running) run.controller.abort(new Error('switchboard is stopping'));
    await Promise.all(running.map((run) => run.finished.catch(() => undefined)));
  }

  // ---------------------------------------------------------------------------------------------

  private async execute(
    suite: SuiteRecord,
    record: SuiteRunRecord,
    run: { learn: boolean; concurrency: number; chaos: (ChaosProfile & { seed: number }) | null; controller: AbortController; active: ActiveRun; onProgress?: (done: number, total: number) => void },
  ): Promise<SuiteRun> {
    const { store } = this.deps;
    const started = performance.now();
    let totals: RunTotals | null = null;
    let failure: string | null = null;
    const agent = this.runAgent();
    try {
      totals = await runCases(this.steps(suite.id, () => true, { withExpectations: true }), {
        ...this.sendOptions(this.deps.config(), agent),
        targetUrl: record.target_url,
        concurrency: run.concurrency,
        learnNoise: run.learn,
        chaos: run.chaos,
        rules: { ignore: new IgnoreRules(suite.ignore), compareHeaders: suite.compare_headers },
        signal: run.controller.signal,
        onCase: () => {
          run.active.done++;
          run.onProgress?.(run.active.done, suite.cases);
        },
        onStep: (outcomes) => store.insertResults(record.id, outcomes),
      });
    } catch (error) {
      failure = (error as Error).message;
      this.deps.logger.error(`suite ${suite.name}: run ${record.id} stopped: ${failure}`);
    } finally {
      await agent.close().catch(() => {});
    }
    const status = this.closing ? 'interrupted' : run.controller.signal.aborted ? 'cancelled' : failure ? 'interrupted' : 'done';
    const counts = totals?.counts ?? { new: 0, pass: 0, changed: 0, failed: 0 };
    const merged = mergeIgnores(suite.ignore, totals?.learnedIgnores ?? []);
    const becomes = run.learn && status === 'done';
    const warning = [failure ? `the run stopped: ${failure}` : null, becomes ? merged.warning : null].filter((note) => note !== null).join('; ') || null;
    try {
      // In this order: whoever sees the run 'done' sees its expectation and its trimmed history,
      // and may start the next run at once.
      if (becomes) await store.acceptRun(record.id, suite.id, merged.ignore, merged.added);
      await store.trimRuns(suite.id, SUITE_RUNS_KEPT);
      this.active.delete(record.id);
      await store.finishRun(record.id, { status, counts, learnedIgnores: becomes ? merged.added : [], warning, durationMs: performance.now() - started });
    } catch (error) {
      this.deps.logger.error(`suite ${suite.name}: recording run ${record.id} failed: ${(error as Error).message}`);
      throw error;
    }
    return this.wireRun((await store.run(record.id))!);
  }

  /** What a run sends with; its agent is the run's own, closed by `withAgent`. */
  private sendOptions(config: Config, agent: Agent) {
    return {
      allowHosts: config.replay.allow_hosts,
      timeoutMs: config.replay.timeout_ms,
      agent,
      version: this.deps.version,
      now: this.deps.now,
      secrets: () => this.deps.providers.allSecrets(),
      provider: (source: RunCase) => ({ provider: this.deps.providers.webhook(source.provider) }),
    };
  }

  /** A run's own connection pool, through the target guard (runner.ts RunOptions.agent). */
  private runAgent(): Agent {
    const config = this.deps.config();
    return guardedAgent({ allowHosts: () => config.replay.allow_hosts, connectTimeoutMs: () => config.replay.timeout_ms });
  }

  /** A suite's cases a step at a time, as the runner takes them. */
  private async *steps(suiteId: number, include: (position: number) => boolean, options: { withExpectations: boolean }): AsyncGenerator<RunCase[]> {
    for await (const records of this.caseRecords(suiteId)) {
      const step = records
        .filter((record) => include(record.position))
        .map(
          (record): RunCase => ({
            id: record.source_event_id ?? record.position,
            position: record.position,
            provider: record.provider,
            event_type: record.event_type,
            trust_mode: record.trust_mode,
            content_type: record.content_type,
            headers: record.headers,
            payload: record.payload,
            expectation: options.withExpectations ? record.expectation : null,
          }),
        );
      if (step.length > 0) yield step;
    }
  }

  private async *caseRecords(suiteId: number): AsyncGenerator<SuiteCaseRecord[]> {
    let after = 0;
    for (;;) {
      const page = await this.deps.store.casePage(suiteId, after, RUN_STEP_CASES, RUN_STEP_BYTES);
      if (page.length === 0) return;
      yield page;
      after = page.at(-1)!.position;
    }
  }

  private async eventsById(ids: readonly number[]): Promise<EventRecord[]> {
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
    if (repeated.length > 0) throw new SwitchboardError('invalid_argument', `event_ids: ${[...new Set(repeated)].join(', ')} given more than once`);
    const found = new Map<number, EventRecord>();
    for (let i = 0; i < ids.length; i += EVENT_BATCH_ROWS) {
      for (const event of await this.deps.events.getEvents(ids.slice(i, i + EVENT_BATCH_ROWS))) found.set(event.id, event);
      this.checkSize(found.values());
    }
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new SwitchboardError('invalid_argument', `no event ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ` (and ${missing.length - 20} more)` : ''}: they may have been cleared or expired; nothing was saved`);
    }
    return ids.map((id) => found.get(id)!);
  }

  private async eventsByFilter(filter: NonNullable<SaveSuiteInput['filter']>): Promise<EventRecord[]> {
    const { limit = SUITE_DEFAULT_CASES, ...query } = filter;
    const exportFilter: ExportFilter = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
    const events: EventRecord[] = [];
    let after: { received_at: string; id: number } | null = null;
    while (events.length < limit) {
      const batch = await this.deps.events.exportBatch(exportFilter, after, { rows: Math.min(EVENT_BATCH_ROWS, limit - events.length), bytes: EVENT_BATCH_BYTES });
      events.push(...batch.events);
      this.checkSize(events);
      if (!batch.next) break;
      after = batch.next;
    }
    if (events.length === 0) {
      const described = Object.entries(query).map(([key, value]) => `${key}=${String(value)}`).join(', ');
      throw new SwitchboardError('invalid_argument', `no stored event matches ${described || 'the filter (there are no events)'}: a suite needs at least one case; nothing was saved`);
    }
    return events.slice(0, limit);
  }

  private checkSize(events: Iterable<EventRecord>): void {
    let bytes = 0;
    for (const event of events) bytes += event.payload.byteLength;
    if (bytes > MAX_SUITE_BYTES) {
      throw new SwitchboardError('invalid_argument', `these events hold more than ${MAX_SUITE_BYTES / 1024 / 1024} MB of payloads: pick fewer (a smaller limit, a narrower filter); nothing was saved`);
    }
  }

  private caseOf(event: EventRecord): NewSuiteCase {
    const { id, payload_size: _size, ...rest } = event;
    return { ...rest, source_event_id: id, kind: this.deps.providers.config(event.provider)?.kind ?? null };
  }

  private async resolveTarget(suite: SuiteRecord, given: string | undefined): Promise<string> {
    const last = given === undefined ? (await this.deps.store.runs(suite.id, 1))[0]?.target_url : undefined;
    const target = given ?? last ?? this.deps.config().replay.default_target ?? null;
    if (target === null) {
      throw new SwitchboardError('invalid_argument', `no target for suite "${suite.name}": pass target_url (e.g. http://localhost:3000/webhooks) or set replay.default_target`);
    }
    return targetUrl(target).href;
  }

  private async requireSuite(name: string): Promise<SuiteRecord> {
    const suite = await this.deps.store.suite(name);
    if (suite) return suite;
    const names = await this.deps.store.suiteNames();
    throw new SwitchboardError(
      'not_found',
      names.length > 0
        ? `there is no suite "${name}"; the suites are: ${names.join(', ')}`
        : `there is no suite "${name}", and no suites yet: save one from events first (switchboard suite create NAME, or "Save as suite…" on the Events screen)`,
    );
  }

  private async requireRun(id: number): Promise<SuiteRunRecord> {
    const run = await this.deps.store.run(id);
    if (!run) throw new SwitchboardError('not_found', `there is no suite run ${id} (the ${SUITE_RUNS_KEPT} latest runs of each suite are kept)`);
    return run;
  }

  private assertIdle(suite: SuiteRecord): void {
    const running = [...this.active].find(([, run]) => run.suiteId === suite.id);
    if (running) throw new SwitchboardError('invalid_argument', `suite "${suite.name}" is running (run ${running[0]}): wait for it to finish`);
  }

  private summary(suite: SuiteRecord, last: SuiteRunRecord | null): SuiteSummary {
    const { id: _id, ...rest } = suite;
    return { ...rest, last_run: last ? this.wireRun(last) : null };
  }

  private wireRun(record: SuiteRunRecord, stored?: number): SuiteRun {
    const { suite_id: _suiteId, ...rest } = record;
    const active = this.active.get(record.id);
    const finished = record.pass + record.changed + record.failed + record.new;
    return { ...rest, chaos: record.chaos ? formatChaosSpec(record.chaos) : null, done: active?.done ?? (record.status === 'running' ? (stored ?? 0) : finished) };
  }
}

/** The suite's ignores plus what a run learned, within MAX_IGNORES. */
function mergeIgnores(current: readonly string[], learned: readonly string[]): { ignore: string[]; added: string[]; warning: string | null } {
  const known = new Set(current);
  const fresh = learned.filter((path) => !known.has(path));
  const room = Math.max(0, MAX_IGNORES - current.length);
  const added = fresh.slice(0, room);
  return {
    ignore: [...current, ...added],
    added,
    warning: fresh.length > room ? `${fresh.length - room} learned ignores were not kept: a suite holds at most ${MAX_IGNORES}; ignore a wider path by hand (e.g. $..updated_at)` : null,
  };
}

function toWireResult(result: CaseResultRecord, withDiff: boolean): CaseResult {
  return {
    case: result.position,
    provider: result.provider,
    event_type: result.event_type,
    verdict: result.verdict,
    status: result.answer?.status ?? null,
    expected_status: result.expected_status,
    ms: result.response_ms,
    resigned: result.resigned,
    diff_count: result.diff.length,
    ...(withDiff ? { diff: result.diff } : {}),
    diff_truncated: result.diff_truncated,
    reason: result.reason,
    warning: result.warning,
    idempotency: result.idempotency,
    chaos: result.chaos,
  };
}

function bodyView(answer: Answer, secrets: readonly string[]): BodyView {
  const cut = cutBytes(answer.body, answer.body.byteLength, { complete: answer.size === answer.body.byteLength });
  let text = cut.text;
  if (cut.encoding === 'utf8') for (const secret of secrets) if (secret.length >= 8) text = text.split(secret).join('«redacted»');
  return { text, encoding: cut.encoding, size: answer.size, truncated: answer.size > answer.body.byteLength };
}
