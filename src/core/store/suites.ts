import type { ChaosProfile, IdempotencyVerdict } from '../../shared/delivery-lab.js';
import type { CaseChaos, Difference, RUN_STATUSES, Verdict } from '../../shared/suites.js';
import type { Answer } from '../../shared/suites.js';
import type { SqlClient } from './sql-client.js';
import { MAX_RESPONSE_BODY_BYTES } from '../../shared/events.js';
import type { EventRecord } from './types.js';
import { MAX_DETAIL_CHARS, storableHeaders, storableOrNull, storableText } from './storable.js';

/**
 * The SQL of suites (DESIGN §14, migrations/0008_suites.sql): suites, their cases (copies of
 * events), expectations, runs and the results of each case of a run. Every write that must be
 * whole is one transaction: a suite saved or imported, an expectation accepted. A run's results
 * are written one batch per step of the run (RunStep), never a statement per case.
 */

/** A case as it is saved: an event's fields, copied. */
export interface NewSuiteCase extends Omit<EventRecord, 'id' | 'payload_size' | 'attempts' | 'drift'> {
  source_event_id: number | null;
  /** The provider's kind when the case was made, if known. */
  kind: string | null;
}

export interface SuiteCaseRecord extends NewSuiteCase {
  position: number;
  payload_size: number;
  expectation: Answer | null;
}

export interface SuiteRecord {
  id: number;
  name: string;
  ignore: string[];
  compare_headers: string[];
  created_at: string;
  updated_at: string;
  cases: number;
  expectations: number;
}

export type RunStatus = (typeof RUN_STATUSES)[number];

export interface SuiteRunRecord {
  id: number;
  suite_id: number;
  suite: string;
  target_url: string;
  status: RunStatus;
  requested_by: string;
  concurrency: number;
  total: number;
  accepted: boolean;
  pass: number;
  changed: number;
  failed: number;
  new: number;
  learned_ignores: string[];
  warning: string | null;
  /** The chaos profile as used, seed included (migrations/0011_suite_chaos.sql). */
  chaos: ChaosProfile | null;
  started_at: string;
  duration_ms: number | null;
}

/** One case of a run, as stored. */
export interface CaseResultRecord {
  position: number;
  provider: string;
  event_type: string | null;
  verdict: Verdict;
  resigned: boolean;
  /** What came back (null when nothing did). */
  answer: Answer | null;
  expected_status: number | null;
  response_ms: number | null;
  diff: Difference[];
  diff_truncated: boolean;
  reason: string | null;
  warning: string | null;
  /** With chaos duplicates (idempotencyVerdict). */
  idempotency: IdempotencyVerdict | null;
  /** What the run's chaos profile did to the case; null without one. */
  chaos: CaseChaos | null;
}

/** A case's summary for lists (no payload). */
export interface SuiteCaseSummary {
  position: number;
  source_event_id: number | null;
  provider: string;
  event_type: string | null;
  external_id: string | null;
  trust_mode: EventRecord['trust_mode'];
  origin: EventRecord['origin'];
  payload_size: number;
  received_at: string;
  expected_status: number | null;
}

/** Rows per INSERT, and the payload bytes one statement may carry (past its first row). */
const INSERT_ROWS = 200;
const INSERT_BYTES = 8 * 1024 * 1024;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const CASE_COLUMNS = [
  'position', 'source_event_id', 'provider', 'kind', 'family', 'event_type', 'external_id', 'origin', 'trust_mode', 'verified',
  'verify_detail', 'content_type', 'source_ip', 'headers', 'payload', 'payload_size', 'received_at',
] as const;
const CASE_CASTS: Partial<Record<(typeof CASE_COLUMNS)[number], string>> = { headers: '::jsonb', payload: '::bytea', received_at: '::timestamptz' };

const RESULT_COLUMNS = [
  'run_id', 'position', 'provider', 'event_type', 'verdict', 'resigned', 'status', 'expected_status', 'response_ms', 'response_headers', 'body', 'body_size',
  'body_sha256', 'diff', 'diff_truncated', 'reason', 'warning', 'idempotency', 'sent_order', 'reordered', 'delay_ms', 'duplicate_statuses',
] as const;
const RESULT_CASTS: Partial<Record<(typeof RESULT_COLUMNS)[number], string>> = { response_headers: '::jsonb', body: '::bytea', diff: '::jsonb', duplicate_statuses: '::jsonb' };

const RUN_COLUMNS = `r.id, r.suite_id, s.name AS suite, r.target_url, r.status, r.requested_by, r.concurrency, r.total, r.accepted,
  r.pass, r.changed, r.failed, r.new, r.learned_ignores, r.warning, r.chaos, ${iso('r.started_at')} AS started_at, r.duration_ms`;

type Row = Record<string, unknown>;

export class SuiteStore {
  constructor(private readonly db: SqlClient) {}

  async listSuites(): Promise<SuiteRecord[]> {
    const rows = await this.db.query<Row>(`${SUITE_SELECT} ORDER BY s.name`);
    return rows.map(toSuite);
  }

  async suite(name: string): Promise<SuiteRecord | null> {
    const rows = await this.db.query<Row>(`${SUITE_SELECT} WHERE s.name = $1`, [name]);
    return rows[0] ? toSuite(rows[0]) : null;
  }

  async suiteNames(): Promise<string[]> {
    return (await this.db.query<{ name: string }>('SELECT name FROM suites ORDER BY name')).map((row) => row.name);
  }

  /**
   * Creates the suite, or replaces the cases of the one with this name — its ignores stay
   * unless given, its expectations go (they answered other cases). One transaction: a save that
   * fails leaves the suite as it was.
   */
  async saveSuite(input: { name: string; cases: readonly NewSuiteCase[]; ignore?: readonly string[]; compareHeaders?: readonly string[]; expectations?: ReadonlyMap<number, Answer> }): Promise<{ created: boolean }> {
    return this.db.transaction(async (tx) => {
      const existing = await tx.query<{ id: number | string }>('SELECT id FROM suites WHERE name = $1 FOR UPDATE', [input.name]);
      let id: number;
      if (existing[0]) {
        id = Number(existing[0].id);
        await tx.query('DELETE FROM suite_expectations WHERE suite_id = $1', [id]);
        await tx.query('DELETE FROM suite_cases WHERE suite_id = $1', [id]);
        await tx.query(
          `UPDATE suites SET updated_at = now(), ignore = coalesce($2::jsonb, ignore), compare_headers = coalesce($3::jsonb, compare_headers) WHERE id = $1`,
          [id, jsonOrNull(input.ignore), jsonOrNull(input.compareHeaders)],
        );
      } else {
        const rows = await tx.query<{ id: number | string }>(
          `INSERT INTO suites (name, ignore, compare_headers) VALUES ($1, coalesce($2::jsonb, '[]'::jsonb), coalesce($3::jsonb, '[]'::jsonb)) RETURNING id`,
          [input.name, jsonOrNull(input.ignore), jsonOrNull(input.compareHeaders)],
        );
        id = Number(rows[0]!.id);
      }
      const rows = input.cases.map((event, index) => caseValues(id, index + 1, event));
      await insertRows(tx, 'suite_cases', ['suite_id', ...CASE_COLUMNS], { ...CASE_CASTS }, rows, (row) => (row.payload as Buffer).length);
      if (input.expectations && input.expectations.size > 0) {
        const expected = [...input.expectations].map(([position, answer]) => ({
          suite_id: id,
          position,
          status: answer.status,
          headers: JSON.stringify(storableHeaders(answer.headers).headers),
          body: Buffer.from(answer.body),
          body_size: answer.size,
          body_sha256: answer.sha256,
        }));
        await insertRows(tx, 'suite_expectations', ['suite_id', 'position', 'status', 'headers', 'body', 'body_size', 'body_sha256'], { headers: '::jsonb', body: '::bytea' }, expected, (row) => (row.body as Buffer).length);
      }
      return { created: !existing[0] };
    });
  }

  async updateRules(suiteId: number, rules: { ignore?: readonly string[]; compareHeaders?: readonly string[] }): Promise<void> {
    await this.db.query(`UPDATE suites SET updated_at = now(), ignore = coalesce($2::jsonb, ignore), compare_headers = coalesce($3::jsonb, compare_headers) WHERE id = $1`, [
      suiteId,
      jsonOrNull(rules.ignore),
      jsonOrNull(rules.compareHeaders),
    ]);
  }

  async deleteSuite(name: string): Promise<boolean> {
    const rows = await this.db.query<{ id: unknown }>('DELETE FROM suites WHERE name = $1 RETURNING id', [name]);
    return rows.length > 0;
  }

  async caseSummaries(suiteId: number): Promise<SuiteCaseSummary[]> {
    const rows = await this.db.query<Row>(
      `SELECT c.position, c.source_event_id, c.provider, c.event_type, c.external_id, c.trust_mode, c.origin, c.payload_size,
              ${iso('c.received_at')} AS received_at, e.status AS expected_status
       FROM suite_cases c LEFT JOIN suite_expectations e ON e.suite_id = c.suite_id AND e.position = c.position
       WHERE c.suite_id = $1 ORDER BY c.position`,
      [suiteId],
    );
    return rows.map((row) => ({
      position: Number(row.position),
      source_event_id: row.source_event_id === null ? null : Number(row.source_event_id),
      provider: row.provider as string,
      event_type: row.event_type as string | null,
      external_id: row.external_id as string | null,
      trust_mode: row.trust_mode as SuiteCaseSummary['trust_mode'],
      origin: row.origin as SuiteCaseSummary['origin'],
      payload_size: Number(row.payload_size),
      received_at: row.received_at as string,
      expected_status: row.expected_status === null ? null : Number(row.expected_status),
    }));
  }

  /**
   * The cases after `afterPosition`, in order, with payloads and expectations: at most `limit`
   * of them and — past the first — about `maxBytes` of payload and expected bodies.
   */
  async casePage(suiteId: number, afterPosition: number, limit: number, maxBytes: number): Promise<SuiteCaseRecord[]> {
    const sizes = await this.db.query<{ position: number; bytes: number | string }>(
      // The LIMIT inside, so the index gives the next `limit` cases in order (not every case after them, sorted).
      `SELECT c.position, c.payload_size + coalesce(least(e.body_size, ${MAX_RESPONSE_BODY_BYTES}), 0) AS bytes
       FROM (SELECT position, payload_size FROM suite_cases WHERE suite_id = $1 AND position > $2 ORDER BY suite_id, position LIMIT $3) AS c
       LEFT JOIN suite_expectations e ON e.suite_id = $1 AND e.position = c.position ORDER BY c.position`,
      [suiteId, afterPosition, limit],
    );
    let last = 0;
    let bytes = 0;
    for (const row of sizes) {
      bytes += Number(row.bytes);
      if (last > 0 && bytes > maxBytes) break;
      last = Number(row.position);
    }
    if (last === 0) return [];
    const rows = await this.db.query<Row>(
      `SELECT c.*, ${iso('c.received_at')} AS received_at_text, e.status AS e_status, e.headers AS e_headers, e.body AS e_body,
              e.body_size AS e_body_size, e.body_sha256 AS e_body_sha256
       FROM suite_cases c LEFT JOIN suite_expectations e ON e.suite_id = c.suite_id AND e.position = c.position
       WHERE c.suite_id = $1 AND c.position > $2 AND c.position <= $3 ORDER BY c.position`,
      [suiteId, afterPosition, last],
    );
    return rows.map(toCase);
  }

  async insertRun(run: { suiteId: number; targetUrl: string; requestedBy: string; concurrency: number; total: number; chaos?: ChaosProfile | null }): Promise<SuiteRunRecord> {
    const rows = await this.db.query<{ id: number | string }>(
      `INSERT INTO suite_runs (suite_id, target_url, status, requested_by, concurrency, total, chaos) VALUES ($1, $2, 'running', $3, $4, $5, $6::jsonb) RETURNING id`,
      [run.suiteId, run.targetUrl, run.requestedBy, run.concurrency, run.total, run.chaos ? JSON.stringify(run.chaos) : null],
    );
    return (await this.run(Number(rows[0]!.id)))!;
  }

  /** One step of a run: every result of it in one statement (or a few, for large bodies). */
  async insertResults(runId: number, results: readonly CaseResultRecord[]): Promise<void> {
    const rows = results.map((result) => ({
      run_id: runId,
      position: result.position,
      provider: result.provider,
      event_type: storableOrNull(result.event_type, 256),
      verdict: result.verdict,
      resigned: result.resigned,
      status: result.answer?.status ?? null,
      expected_status: result.expected_status,
      response_ms: result.response_ms,
      response_headers: result.answer ? JSON.stringify(storableHeaders(result.answer.headers).headers) : null,
      body: result.answer ? Buffer.from(result.answer.body) : null,
      body_size: result.answer?.size ?? null,
      body_sha256: result.answer?.sha256 ?? null,
      diff: JSON.stringify(storableJson(result.diff)),
      diff_truncated: result.diff_truncated,
      reason: storableOrNull(result.reason, MAX_DETAIL_CHARS),
      warning: storableOrNull(result.warning, MAX_DETAIL_CHARS),
      idempotency: result.idempotency,
      sent_order: result.chaos?.sent_order ?? null,
      reordered: result.chaos?.reordered ?? null,
      delay_ms: result.chaos?.delay_ms ?? null,
      duplicate_statuses: result.chaos ? JSON.stringify(result.chaos.duplicates) : null,
    }));
    await insertRows(this.db, 'suite_case_results', RESULT_COLUMNS, RESULT_CASTS, rows, (row) => (row.body as Buffer | null)?.length ?? 0);
  }

  async finishRun(
    runId: number,
    outcome: { status: RunStatus; counts: Record<Verdict, number>; learnedIgnores: readonly string[]; warning: string | null; durationMs: number },
  ): Promise<void> {
    await this.db.query(
      `UPDATE suite_runs SET status = $2, pass = $3, changed = $4, failed = $5, new = $6, learned_ignores = $7::jsonb, warning = $8, duration_ms = $9 WHERE id = $1`,
      [
        runId,
        outcome.status,
        outcome.counts.pass,
        outcome.counts.changed,
        outcome.counts.failed,
        outcome.counts.new,
        JSON.stringify(outcome.learnedIgnores),
        storableOrNull(outcome.warning, MAX_DETAIL_CHARS),
        Math.round(outcome.durationMs),
      ],
    );
  }

  /**
   * A run's answers become the suite's expectation (cases that got no answer keep the one they
   * had), and its ignores become `ignore`. One transaction.
   */
  async acceptRun(runId: number, suiteId: number, ignore: readonly string[], learnedIgnores: readonly string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `DELETE FROM suite_expectations WHERE suite_id = $1 AND position IN (SELECT position FROM suite_case_results WHERE run_id = $2 AND verdict <> 'failed')`,
        [suiteId, runId],
      );
      await tx.query(
        `INSERT INTO suite_expectations (suite_id, position, status, headers, body, body_size, body_sha256, run_id)
         SELECT $1, r.position, r.status, coalesce(r.response_headers, '{}'::jsonb), r.body, r.body_size, r.body_sha256, r.run_id
         FROM suite_case_results r JOIN suite_cases c ON c.suite_id = $1 AND c.position = r.position
         WHERE r.run_id = $2 AND r.verdict <> 'failed'`,
        [suiteId, runId],
      );
      await tx.query(`UPDATE suites SET ignore = $2::jsonb, updated_at = now() WHERE id = $1`, [suiteId, JSON.stringify(ignore)]);
      await tx.query(`UPDATE suite_runs SET accepted = true, learned_ignores = $2::jsonb WHERE id = $1`, [runId, JSON.stringify(learnedIgnores)]);
    });
  }

  /** Keeps the `keep` newest runs of a suite. */
  async trimRuns(suiteId: number, keep: number): Promise<void> {
    await this.db.query(
      `DELETE FROM suite_runs WHERE suite_id = $1 AND id < coalesce((SELECT id FROM suite_runs WHERE suite_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1), 0)`,
      [suiteId, keep - 1],
    );
  }

  async run(id: number): Promise<SuiteRunRecord | null> {
    const rows = await this.db.query<Row>(`SELECT ${RUN_COLUMNS} FROM suite_runs r JOIN suites s ON s.id = r.suite_id WHERE r.id = $1`, [id]);
    return rows[0] ? toRun(rows[0]) : null;
  }

  async runs(suiteId: number, limit: number): Promise<SuiteRunRecord[]> {
    const rows = await this.db.query<Row>(`SELECT ${RUN_COLUMNS} FROM suite_runs r JOIN suites s ON s.id = r.suite_id WHERE r.suite_id = $1 ORDER BY r.id DESC LIMIT $2`, [
      suiteId,
      limit,
    ]);
    return rows.map(toRun);
  }

  async lastRuns(suiteIds: readonly number[]): Promise<Map<number, SuiteRunRecord>> {
    if (suiteIds.length === 0) return new Map();
    const rows = await this.db.query<Row>(
      `SELECT ${RUN_COLUMNS} FROM unnest($1::bigint[]) AS ids(suite_id)
       CROSS JOIN LATERAL (SELECT * FROM suite_runs WHERE suite_runs.suite_id = ids.suite_id ORDER BY id DESC LIMIT 1) AS r
       JOIN suites s ON s.id = r.suite_id`,
      [suiteIds],
    );
    return new Map(rows.map((row) => [Number(row.suite_id), toRun(row)]));
  }

  /** A run's results in case order; bodies only with `bodies` (a case's detail, an accept). */
  async results(runId: number, options: { bodies?: boolean; position?: number } = {}): Promise<CaseResultRecord[]> {
    const columns = options.bodies
      ? 'r.*'
      : `r.run_id, r.position, r.provider, r.event_type, r.verdict, r.resigned, r.status, r.expected_status, r.response_ms, r.body_size, r.body_sha256,
         r.diff, r.diff_truncated, r.reason, r.warning, r.idempotency, r.sent_order, r.reordered, r.delay_ms, r.duplicate_statuses`;
    const rows = await this.db.query<Row>(
      `SELECT ${columns} FROM suite_case_results r WHERE r.run_id = $1 ${options.position !== undefined ? 'AND r.position = $2' : ''} ORDER BY r.position`,
      options.position !== undefined ? [runId, options.position] : [runId],
    );
    return rows.map((row) => toResult(row, options.bodies === true));
  }

  /** The case's current expectation (status, headers, first 64 KiB), for a side-by-side view. */
  async expectation(suiteId: number, position: number): Promise<Answer | null> {
    const rows = await this.db.query<Row>('SELECT status, headers, body, body_size, body_sha256 FROM suite_expectations WHERE suite_id = $1 AND position = $2', [
      suiteId,
      position,
    ]);
    const row = rows[0];
    return row ? toAnswer(row.status, row.headers, row.body, row.body_size, row.body_sha256) : null;
  }

  /**
   * Runs left 'running' by a process that ended mid-run. Only on the embedded database, which
   * one process owns: on PostgreSQL another instance may be running them.
   */
  async markInterrupted(): Promise<void> {
    if (this.db.kind !== 'pglite') return;
    await this.db.query(`UPDATE suite_runs SET status = 'interrupted' WHERE status = 'running'`);
  }
}

const SUITE_SELECT = `SELECT s.id, s.name, s.ignore, s.compare_headers, ${iso('s.created_at')} AS created_at, ${iso('s.updated_at')} AS updated_at,
  (SELECT count(*) FROM suite_cases c WHERE c.suite_id = s.id) AS cases,
  (SELECT count(*) FROM suite_expectations e WHERE e.suite_id = s.id) AS expectations
  FROM suites s`;

function caseValues(suiteId: number, position: number, event: NewSuiteCase): Record<string, unknown> {
  return {
    suite_id: suiteId,
    position,
    source_event_id: event.source_event_id,
    provider: event.provider,
    kind: event.kind,
    family: event.family,
    event_type: storableOrNull(event.event_type, 256),
    external_id: storableOrNull(event.external_id, 512),
    origin: event.origin,
    trust_mode: event.trust_mode,
    verified: event.verified,
    verify_detail: storableOrNull(event.verify_detail, MAX_DETAIL_CHARS),
    content_type: storableOrNull(event.content_type, 256),
    source_ip: storableOrNull(event.source_ip, 256),
    headers: JSON.stringify(storableHeaders(event.headers).headers),
    payload: Buffer.from(event.payload),
    payload_size: event.payload.byteLength,
    received_at: event.received_at,
  };
}

/**
 * Multi-row INSERTs of `rows` (objects keyed by column), at most INSERT_ROWS and — past the
 * first row — INSERT_BYTES of `bytesOf` per statement.
 */
async function insertRows(
  db: SqlClient,
  table: string,
  columns: readonly string[],
  casts: Record<string, string>,
  rows: readonly Record<string, unknown>[],
  bytesOf: (row: Record<string, unknown>) => number,
): Promise<void> {
  let start = 0;
  while (start < rows.length) {
    let end = start;
    let bytes = 0;
    while (end < rows.length && end - start < INSERT_ROWS) {
      bytes += bytesOf(rows[end]!);
      if (end > start && bytes > INSERT_BYTES) break;
      end++;
    }
    const params: unknown[] = [];
    const tuples = rows.slice(start, end).map((row) => `(${columns.map((column) => `$${params.push(row[column] ?? null)}${casts[column] ?? ''}`).join(', ')})`);
    await db.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, params);
    start = end;
  }
}

const jsonOrNull = (value: readonly string[] | undefined) => (value === undefined ? null : JSON.stringify(value));

/** Strings a handler wrote (diff values) made storable in jsonb: no NUL, no lone surrogate. */
function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value, Number.MAX_SAFE_INTEGER);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [storableText(key, Number.MAX_SAFE_INTEGER), storableJson(inner)]));
  }
  return value;
}

function toBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  return new Uint8Array(0);
}

function asJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function toAnswer(status: unknown, headers: unknown, body: unknown, size: unknown, sha256: unknown): Answer {
  return { status: Number(status), headers: asJson<Record<string, string>>(headers ?? {}), body: toBytes(body), size: Number(size), sha256: String(sha256) };
}

function toSuite(row: Row): SuiteRecord {
  return {
    id: Number(row.id),
    name: row.name as string,
    ignore: asJson<string[]>(row.ignore),
    compare_headers: asJson<string[]>(row.compare_headers),
    created_at: row.created_at as string,
    updated_at: row.updated_at as string,
    cases: Number(row.cases),
    expectations: Number(row.expectations),
  };
}

function toCase(row: Row): SuiteCaseRecord {
  const payload = toBytes(row.payload);
  return {
    position: Number(row.position),
    source_event_id: row.source_event_id === null ? null : Number(row.source_event_id),
    provider: row.provider as string,
    kind: row.kind as string | null,
    family: row.family as SuiteCaseRecord['family'],
    event_type: row.event_type as string | null,
    external_id: row.external_id as string | null,
    origin: row.origin as SuiteCaseRecord['origin'],
    trust_mode: row.trust_mode as SuiteCaseRecord['trust_mode'],
    verified: row.verified as boolean,
    verify_detail: row.verify_detail as string | null,
    content_type: row.content_type as string | null,
    source_ip: row.source_ip as string | null,
    headers: asJson<Record<string, string>>(row.headers),
    payload,
    payload_size: payload.byteLength,
    received_at: row.received_at_text as string,
    expectation: row.e_status === null || row.e_status === undefined ? null : toAnswer(row.e_status, row.e_headers, row.e_body, row.e_body_size, row.e_body_sha256),
  };
}

function toRun(row: Row): SuiteRunRecord {
  return {
    id: Number(row.id),
    suite_id: Number(row.suite_id),
    suite: row.suite as string,
    target_url: row.target_url as string,
    status: row.status as RunStatus,
    requested_by: row.requested_by as string,
    concurrency: Number(row.concurrency),
    total: Number(row.total),
    accepted: row.accepted as boolean,
    pass: Number(row.pass),
    changed: Number(row.changed),
    failed: Number(row.failed),
    new: Number(row.new),
    learned_ignores: asJson<string[]>(row.learned_ignores),
    warning: row.warning as string | null,
    chaos: row.chaos === null || row.chaos === undefined ? null : asJson<ChaosProfile>(row.chaos),
    started_at: row.started_at as string,
    duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
  };
}

function toResult(row: Row, withBody: boolean): CaseResultRecord {
  const status = row.status === null ? null : Number(row.status);
  return {
    position: Number(row.position),
    provider: row.provider as string,
    event_type: row.event_type as string | null,
    verdict: row.verdict as Verdict,
    resigned: row.resigned as boolean,
    answer:
      status === null
        ? null
        : toAnswer(status, withBody ? row.response_headers : {}, withBody ? row.body : new Uint8Array(0), row.body_size, row.body_sha256),
    expected_status: row.expected_status === null ? null : Number(row.expected_status),
    response_ms: row.response_ms === null ? null : Number(row.response_ms),
    diff: asJson<Difference[]>(row.diff),
    diff_truncated: row.diff_truncated as boolean,
    reason: row.reason as string | null,
    warning: row.warning as string | null,
    idempotency: (row.idempotency ?? null) as IdempotencyVerdict | null,
    chaos:
      row.sent_order === null || row.sent_order === undefined
        ? null
        : { sent_order: Number(row.sent_order), reordered: row.reordered === true, delay_ms: Number(row.delay_ms ?? 0), duplicates: asJson<(number | null)[]>(row.duplicate_statuses ?? []) },
  };
}
