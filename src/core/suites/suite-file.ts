import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ImportedEventSchema } from '../../shared/export.js';
import { SUITE_MAX_CASES, SuiteNameSchema } from '../../shared/suites.js';
import { formatPath } from '../config.js';
import type { ImportLine } from '../export/importer.js';
import type { NewSuiteCase } from '../store/suite-types.js';
import { ANSWER_BODY_BYTES, type Answer } from './compare.js';
import { checkIgnorePatterns } from './json-paths.js';

/**
 * The suite file (DESIGN §14): NDJSON, UTF-8, made to sit in git beside the handler and be read
 * in a diff. Line 1 is the header —
 *   {"switchboard_suite": 1, "name", "providers": {"<name>": "<kind>"}, "ignore": [...], "compare_headers": [...]}
 * — then one line per case: {"case": <n>, "event": <the §12 export object>, "expect": {...} | null}.
 * `expect` is the accepted answer: its status and body (`body_encoding` json — the body as a
 * JSON value, compared as JSON —, utf8 or base64), plus the headers named in compare_headers,
 * and `body_size` / `body_sha256` / `body_truncated` for a body over the 64 KiB a suite keeps.
 *
 * Reading is all or nothing: the first malformed line stops it with its number.
 */

export const SUITE_FILE_VERSION = 1;

export const SuiteFileHeaderSchema = z.object({
  switchboard_suite: z.literal(SUITE_FILE_VERSION, { error: `line 1 must be the header {"switchboard_suite": ${SUITE_FILE_VERSION}, "name": …}` }),
  name: SuiteNameSchema,
  providers: z.record(z.string(), z.string()).default({}),
  ignore: z.array(z.string()).default([]),
  compare_headers: z.array(z.string().regex(/^[!#$%&'*+.^_`|~0-9a-zA-Z-]+$/, 'a header name')).default([]),
});
export type SuiteFileHeader = z.infer<typeof SuiteFileHeaderSchema>;

const SHA256_HEX = /^[0-9a-f]{64}$/;

export const ExpectSchema = z
  .object({
    status: z.number().int().min(100).max(599),
    body: z.unknown(),
    body_encoding: z.enum(['json', 'utf8', 'base64']),
    headers: z.record(z.string(), z.string()).optional(),
    body_size: z.number().int().nonnegative().optional(),
    body_sha256: z.string().regex(SHA256_HEX, '64 lowercase hex characters').optional(),
    body_truncated: z.boolean().optional(),
  })
  .superRefine((expect, context) => {
    if (expect.body_encoding !== 'json' && typeof expect.body !== 'string') {
      context.addIssue({ code: 'custom', path: ['body'], message: `a ${expect.body_encoding} body is a string` });
    }
    if (expect.body_encoding === 'json' && expect.body === undefined) context.addIssue({ code: 'custom', path: ['body'], message: 'a json body is a JSON value' });
    if (expect.body_truncated && (expect.body_size === undefined || expect.body_sha256 === undefined)) {
      context.addIssue({ code: 'custom', path: ['body_truncated'], message: 'a truncated body needs body_size and body_sha256' });
    }
  });
export type ExpectLine = z.infer<typeof ExpectSchema>;

const CaseLineSchema = z.object({
  case: z.number().int().positive(),
  event: ImportedEventSchema.extend({ id: z.number().int().positive().optional() }),
  expect: ExpectSchema.nullable().default(null),
});

export interface FileCase {
  /** The line it was read from. */
  line: number;
  case: number;
  event: NewSuiteCase;
  /** The event object exactly as the file has it: written back as it was by `--accept`. */
  rawEvent: unknown;
  expectation: Answer | null;
}

export interface SuiteFile {
  header: SuiteFileHeader;
  cases: FileCase[];
}

export class SuiteFileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'SuiteFileError';
  }
}

/** Reads a whole suite file, or throws SuiteFileError naming the first bad line. */
export async function parseSuiteFile(lines: AsyncIterable<ImportLine> | Iterable<ImportLine>): Promise<SuiteFile> {
  let header: SuiteFileHeader | null = null;
  const cases: FileCase[] = [];
  let lastCase = 0;
  for await (const { line, text } of lines) {
    if (text === null) throw new SuiteFileError(line, 'the line is too long');
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new SuiteFileError(line, `not JSON: ${(error as Error).message}`);
    }
    if (header === null) {
      const parsed = SuiteFileHeaderSchema.safeParse(value);
      if (!parsed.success) throw new SuiteFileError(line, describe(parsed.error));
      try {
        checkIgnorePatterns(parsed.data.ignore);
      } catch (error) {
        throw new SuiteFileError(line, (error as Error).message);
      }
      header = { ...parsed.data, compare_headers: parsed.data.compare_headers.map((name) => name.toLowerCase()) };
      continue;
    }
    const parsed = CaseLineSchema.safeParse(value);
    if (!parsed.success) throw new SuiteFileError(line, describe(parsed.error));
    const { case: number, event, expect } = parsed.data;
    if (number <= lastCase) throw new SuiteFileError(line, `case ${number} comes after case ${lastCase}: cases are numbered in increasing order`);
    lastCase = number;
    if (cases.length >= SUITE_MAX_CASES) throw new SuiteFileError(line, `a suite holds at most ${SUITE_MAX_CASES} cases`);
    const payload = new Uint8Array(Buffer.from(event.payload_base64, 'base64'));
    if (event.payload_size !== undefined && event.payload_size !== payload.byteLength) {
      throw new SuiteFileError(line, `event.payload_size says ${event.payload_size} bytes but event.payload_base64 holds ${payload.byteLength}`);
    }
    let expectation: Answer | null;
    try {
      expectation = expect === null ? null : answerOf(expect);
    } catch (error) {
      throw new SuiteFileError(line, `expect: ${(error as Error).message}`);
    }
    cases.push({
      line,
      case: number,
      rawEvent: (value as { event: unknown }).event,
      expectation,
      event: {
        source_event_id: event.id ?? null,
        kind: header.providers[event.provider] ?? null,
        provider: event.provider,
        family: event.family,
        event_type: event.event_type,
        external_id: event.external_id,
        origin: event.origin ?? 'import',
        trust_mode: event.trust_mode,
        verified: event.verified,
        verify_detail: event.verify_detail,
        content_type: event.content_type,
        source_ip: event.source_ip,
        headers: event.headers,
        payload,
        received_at: event.received_at,
      },
    });
  }
  if (header === null) throw new SuiteFileError(1, 'the file is empty: line 1 must be the suite header');
  if (cases.length === 0) throw new SuiteFileError(2, 'the suite has no cases');
  return { header, cases };
}

function describe(error: z.ZodError): string {
  return error.issues.map((issue) => `${formatPath(issue.path) || 'the line'}: ${issue.message}`).join('; ');
}

export function headerLine(header: SuiteFileHeader): string {
  return JSON.stringify({
    switchboard_suite: SUITE_FILE_VERSION,
    name: header.name,
    providers: header.providers,
    ignore: header.ignore,
    compare_headers: header.compare_headers,
  });
}

export function caseLine(number: number, event: unknown, expectation: Answer | null, compareHeaders: readonly string[]): string {
  return JSON.stringify({ case: number, event, expect: expectation === null ? null : expectLine(expectation, compareHeaders) });
}

/** An expectation as the file writes it: JSON bodies as JSON values, so a git diff reads them. */
export function expectLine(answer: Answer, compareHeaders: readonly string[]): ExpectLine {
  const bytes = Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
  const complete = answer.size === bytes.length;
  const out: ExpectLine = { status: answer.status, body: '', body_encoding: 'base64' };
  let json: unknown;
  if (complete && bytes.length > 0 && isUtf8(bytes)) {
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      json = undefined;
    }
  }
  if (json !== undefined) Object.assign(out, { body: json, body_encoding: 'json' });
  else if (isUtf8(bytes)) Object.assign(out, { body: bytes.toString('utf8'), body_encoding: 'utf8' });
  else Object.assign(out, { body: bytes.toString('base64'), body_encoding: 'base64' });
  const headers = Object.fromEntries(compareHeaders.filter((name) => answer.headers[name] !== undefined).map((name) => [name, answer.headers[name]!]));
  if (compareHeaders.length > 0) out.headers = headers;
  if (!complete) Object.assign(out, { body_size: answer.size, body_sha256: answer.sha256, body_truncated: true });
  return out;
}

function answerOf(expect: ExpectLine): Answer {
  let bytes: Buffer;
  if (expect.body_encoding === 'json') bytes = Buffer.from(JSON.stringify(expect.body), 'utf8');
  else if (expect.body_encoding === 'utf8') bytes = Buffer.from(expect.body as string, 'utf8');
  else bytes = Buffer.from(expect.body as string, 'base64');
  const headers = Object.fromEntries(Object.entries(expect.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  if (expect.body_truncated) {
    return { status: expect.status, headers, body: new Uint8Array(bytes.subarray(0, ANSWER_BODY_BYTES)), size: expect.body_size!, sha256: expect.body_sha256! };
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (expect.body_sha256 !== undefined && expect.body_sha256 !== sha256 && expect.body_encoding !== 'json') {
    throw new Error(`body_sha256 does not match the body (${sha256})`);
  }
  return { status: expect.status, headers, body: new Uint8Array(bytes.subarray(0, ANSWER_BODY_BYTES)), size: bytes.length, sha256 };
}
