import type { ChaosProfile, IdempotencyVerdict } from '../../shared/delivery-lab.js';
import type { Answer, Difference, Verdict } from '../../shared/suites.js';
import { iso } from './columns.js';
import { MAX_DETAIL_CHARS, storableHeaders, storableOrNull, storableText } from './storable.js';
import type { CaseResultRecord, NewSuiteCase, RunStatus, SuiteCaseRecord, SuiteRecord, SuiteRunRecord } from './suite-types.js';

/**
 * What the statements of suites (suites.ts) select and insert, and how a row becomes a record —
 * one place, as columns.ts is for events.
 */

export const CASE_COLUMNS = [
  'position', 'source_event_id', 'provider', 'kind', 'family', 'event_type', 'external_id', 'origin', 'trust_mode', 'verified',
  'verify_detail', 'content_type', 'source_ip', 'headers', 'payload', 'payload_size', 'received_at',
] as const;
export const CASE_CASTS: Partial<Record<(typeof CASE_COLUMNS)[number], string>> = { headers: '::jsonb', payload: '::bytea', received_at: '::timestamptz' };

export const RESULT_COLUMNS = [
  'run_id', 'position', 'provider', 'event_type', 'verdict', 'resigned', 'status', 'expected_status', 'response_ms', 'response_headers', 'body', 'body_size',
  'body_sha256', 'diff', 'diff_truncated', 'reason', 'warning', 'idempotency', 'sent_order', 'reordered', 'delay_ms', 'duplicate_statuses',
] as const;
export const RESULT_CASTS: Partial<Record<(typeof RESULT_COLUMNS)[number], string>> = { response_headers: '::jsonb', body: '::bytea', diff: '::jsonb', duplicate_statuses: '::jsonb' };

export const RUN_COLUMNS = `r.id, r.suite_id, s.name AS suite, r.target_url, r.status, r.requested_by, r.concurrency, r.total, r.accepted,
  r.pass, r.changed, r.failed, r.new, r.learned_ignores, r.warning, r.chaos, ${iso('r.started_at')} AS started_at, r.duration_ms`;

export type Row = Record<string, unknown>;

export const SUITE_SELECT = `SELECT s.id, s.name, s.ignore, s.compare_headers, ${iso('s.created_at')} AS created_at, ${iso('s.updated_at')} AS updated_at,
  (SELECT count(*) FROM suite_cases c WHERE c.suite_id = s.id) AS cases,
  (SELECT count(*) FROM suite_expectations e WHERE e.suite_id = s.id) AS expectations
  FROM suites s`;

export function caseValues(suiteId: number, position: number, event: NewSuiteCase): Record<string, unknown> {
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

export const jsonOrNull = (value: readonly string[] | undefined) => (value === undefined ? null : JSON.stringify(value));

/** Strings a handler wrote (diff values) made storable in jsonb: no NUL, no lone surrogate. */
export function storableJson(value: unknown): unknown {
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

export function toAnswer(status: unknown, headers: unknown, body: unknown, size: unknown, sha256: unknown): Answer {
  return { status: Number(status), headers: asJson<Record<string, string>>(headers ?? {}), body: toBytes(body), size: Number(size), sha256: String(sha256) };
}

export function toSuite(row: Row): SuiteRecord {
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

export function toCase(row: Row): SuiteCaseRecord {
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

export function toRun(row: Row): SuiteRunRecord {
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

export function toResult(row: Row, withBody: boolean): CaseResultRecord {
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
