import { isUtf8 } from 'node:buffer';
import diff from 'microdiff';
import { MAX_DIFFERENCES, type Answer, type Difference } from '../../shared/suites.js';

export type { Answer };
import { MAX_RESPONSE_BODY_BYTES } from '../../shared/events.js';
import { formatJsonPath, isWritablePath, type IgnoreRules, type JsonPathSegments } from './json-paths.js';

/**
 * How a handler's answer is judged against the suite's expectation (DESIGN §14): the status,
 * the headers named in `compare_headers`, and the body — as JSON when both bodies are JSON (key
 * order and whitespace never matter; differences by JSONPath, through microdiff), byte for byte
 * otherwise, and by size and SHA-256 when either is over the 64 KiB a suite keeps.
 *
 * microdiff was chosen over jsondiffpatch after measuring both on a 2 KB Stripe-like body:
 * ~19 µs against ~62 µs a diff, ~15 µs against ~52 µs for equal bodies; it compares arrays index
 * by index, which is what `$.items[2].sku` means, and gives paths as arrays.
 */


/** What a suite keeps of a body: as much as a replay row (64 KiB). */
export const ANSWER_BODY_BYTES = MAX_RESPONSE_BODY_BYTES;
/** A before/after value longer than this (as JSON) is cut, with `…`. */
export const MAX_VALUE_CHARS = 200;

export interface Comparison {
  /** After ignores, cut to MAX_DIFFERENCES. */
  differences: Difference[];
  /** Every difference after ignores (the list may be shorter). */
  count: number;
  truncated: boolean;
  /** How the bodies were compared when it was not as JSON (said on the case). */
  note: string | null;
}

export interface CompareRules {
  ignore: IgnoreRules;
  /** Lowercased response header names to compare. */
  compareHeaders: readonly string[];
}

const BIG_BODY_NOTE = 'a body over 64 KiB is compared by size and SHA-256 beyond the first 64 KiB that are kept; ignores do not apply to it';

export function compareAnswers(expected: Answer, got: Answer, rules: CompareRules): Comparison {
  const found: Difference[] = [];
  if (expected.status !== got.status) found.push({ path: 'status', change: 'changed', before: expected.status, after: got.status });
  for (const name of rules.compareHeaders) {
    const before = expected.headers[name];
    const after = got.headers[name];
    if (before === after) continue;
    const path = `headers.${name}`;
    if (before === undefined) found.push({ path, change: 'added', after });
    else if (after === undefined) found.push({ path, change: 'removed', before });
    else found.push({ path, change: 'changed', before, after });
  }
  const body = compareBodies(expected, got, rules.ignore);
  found.push(...body.differences);
  return {
    differences: found.slice(0, MAX_DIFFERENCES).map(cutDifference),
    count: found.length,
    truncated: found.length > MAX_DIFFERENCES,
    note: body.note,
  };
}

function compareBodies(expected: Answer, got: Answer, ignore: IgnoreRules): { differences: Difference[]; note: string | null } {
  if (expected.size > ANSWER_BODY_BYTES || got.size > ANSWER_BODY_BYTES) {
    if (expected.size === got.size && expected.sha256 === got.sha256) return { differences: [], note: BIG_BODY_NOTE };
    const at = firstDifference(expected.body, got.body);
    const where = at === null ? 'the first 64 KiB are equal: they differ beyond' : `they differ from byte ${at}`;
    return {
      differences: [{ path: 'body', change: 'changed', before: bodyFingerprint(expected), after: bodyFingerprint(got) }],
      note: `${BIG_BODY_NOTE}; ${where}`,
    };
  }
  if (Buffer.from(expected.body.buffer, expected.body.byteOffset, expected.body.byteLength).equals(got.body)) return { differences: [], note: null };
  const before = parseJson(expected.body);
  const after = parseJson(got.body);
  if (before === NOT_JSON || after === NOT_JSON) {
    return {
      differences: [{ path: 'body', change: 'changed', before: bodyExcerpt(expected.body), after: bodyExcerpt(got.body) }],
      note: before === NOT_JSON && after === NOT_JSON ? 'not JSON: compared byte for byte' : `${before === NOT_JSON ? 'the expected' : 'this'} body is not JSON: compared byte for byte`,
    };
  }
  const ignored = ignore.size > 0 ? ignore.matcher(before, after) : () => false;
  return { differences: jsonDifferences(before, after).filter((difference) => !ignored(difference.segments)).map(({ segments: _, ...rest }) => rest), note: null };
}

interface PathDifference extends Difference {
  segments: JsonPathSegments;
}

/** Differences between two JSON values by JSONPath; none when they are equal as JSON. */
export function jsonDifferences(before: unknown, after: unknown): PathDifference[] {
  // microdiff compares the members of two containers; the roots themselves are ours to compare.
  if (kindOf(before) !== kindOf(after) || kindOf(before) === 'primitive') {
    return before === after ? [] : [{ path: '$', segments: [], change: 'changed', before, after }];
  }
  return diff(before as Record<string, unknown>, after as Record<string, unknown>, { cyclesFix: false }).map((entry): PathDifference => {
    const segments = entry.path;
    const path = formatJsonPath(segments);
    if (entry.type === 'CREATE') return { path, segments, change: 'added', after: entry.value };
    if (entry.type === 'REMOVE') return { path, segments, change: 'removed', before: entry.oldValue };
    return { path, segments, change: 'changed', before: entry.oldValue, after: entry.value };
  });
}

export interface Noise {
  /** JSONPath patterns to ignore from now on. */
  paths: string[];
  /** What could not be learned (a body that is not JSON, or over 64 KiB, differed between the sends). */
  warning: string | null;
}

/**
 * What differed between two answers to the same request sent back to back: noise (a time, a
 * request id) that the suite ignores from then on. Indexes inside a path become `[*]` (a time in
 * every item of a list is one rule), except the last, which names one element. Status and
 * headers are never learned: a status that differs between two sends is the handler's
 * behaviour, and shows as a difference.
 */
export function learnNoise(first: Answer, second: Answer, known: IgnoreRules): Noise {
  if (first.size > ANSWER_BODY_BYTES || second.size > ANSWER_BODY_BYTES) {
    const same = first.size === second.size && first.sha256 === second.sha256;
    return { paths: [], warning: same ? null : 'its body is over 64 KiB and differed between two sends: it is compared by SHA-256, so it will show as changed on every run' };
  }
  if (Buffer.from(first.body).equals(second.body)) return { paths: [], warning: null };
  const a = parseJson(first.body);
  const b = parseJson(second.body);
  if (a === NOT_JSON || b === NOT_JSON) {
    return { paths: [], warning: 'its body is not JSON and differed between two sends: it is compared byte for byte, so it will show as changed on every run' };
  }
  const paths = new Set<string>();
  let unwritable = false;
  for (const { segments } of jsonDifferences(a, b)) {
    if (segments.length === 0) {
      return { paths: [], warning: 'its whole body differed between two sends: nothing narrower than the body could be learned as noise' };
    }
    if (!isWritablePath(segments)) {
      unwritable = true;
      continue;
    }
    if (known.covers(segments)) continue;
    const last = segments.length - 1;
    paths.add(segments.reduce<string>((out, segment, i) => out + (typeof segment === 'number' && i < last ? '[*]' : formatJsonPath([segment]).slice(1)), '$'));
  }
  return { paths: [...paths], warning: unwritable ? 'noise under a member name with a quote or a bracket cannot be written as a JSONPath ignore; add a wider ignore by hand' : null };
}

const NOT_JSON = Symbol('not JSON');

function parseJson(bytes: Uint8Array): unknown {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length === 0 || !isUtf8(buffer)) return NOT_JSON;
  try {
    return JSON.parse(buffer.toString('utf8')) as unknown;
  } catch {
    return NOT_JSON;
  }
}

function kindOf(value: unknown): 'array' | 'object' | 'primitive' {
  if (Array.isArray(value)) return 'array';
  return value !== null && typeof value === 'object' ? 'object' : 'primitive';
}

function firstDifference(a: Uint8Array, b: Uint8Array): number | null {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? null : length;
}

function bodyFingerprint(answer: Answer): string {
  return `${answer.size} bytes, sha256 ${answer.sha256}`;
}

/** The start of a body for a difference: text, or base64 when it is not UTF-8. */
function bodyExcerpt(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(0, MAX_VALUE_CHARS * 4);
  return isUtf8(buffer) ? buffer.toString('utf8') : `base64:${buffer.toString('base64')}`;
}

function cutDifference(difference: Difference): Difference {
  const out: Difference = { path: difference.path, change: difference.change };
  if ('before' in difference) out.before = cutValue(difference.before);
  if ('after' in difference) out.after = cutValue(difference.after);
  return out;
}

/** Values longer than MAX_VALUE_CHARS (as JSON for objects) are cut with `…`. */
export function cutValue(value: unknown): unknown {
  if (typeof value === 'string') return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value;
  if (value !== null && typeof value === 'object') {
    const text = JSON.stringify(value);
    return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : value;
  }
  return value;
}
