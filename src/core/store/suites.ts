import type { ChaosProfile } from '../../shared/delivery-lab.js';
import { MAX_RESPONSE_BODY_BYTES } from '../../shared/events.js';
import type { Answer, Verdict } from '../../shared/suites.js';
import { iso } from './columns.js';
import type { SqlClient } from './sql-client.js';
import { MAX_DETAIL_CHARS, storableHeaders, storableOrNull } from './storable.js';
import {
  CASE_CASTS, CASE_COLUMNS, caseValues, jsonOrNull, RESULT_CASTS, RESULT_COLUMNS, RUN_COLUMNS, storableJson, SUITE_SELECT, toAnswer, toCase, toResult, toRun, toSuite,
  type Row,
} from './suite-rows.js';
import type { CaseResultRecord, NewSuiteCase, RunStatus, SuiteCaseRecord, SuiteCaseSummary, SuiteRecord, SuiteRunRecord } from './suite-types.js';

/**
 * The SQL of suites (DESIGN §14, migrations/0008_suites.sql): suites, their cases (copies of
 * events), expectations, runs and the results of each case of a run. Every write that must be
 * whole is one transaction: a suite saved or imported, an expectation accepted. A run's results
 * are written one batch per step of the run (RunStep), never a statement per case.
 */

/** Rows per INSERT, and the payload bytes one statement may carry (past its first row). */
const INSERT_ROWS = 200;
const INSERT_BYTES = 8 * 1024 * 1024;

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
