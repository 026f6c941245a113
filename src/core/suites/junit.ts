import type { IdempotencyVerdict } from '../../shared/delivery-lab.js';
import type { Difference, Verdict } from '../../shared/suites.js';

/**
 * JUnit XML for a suite run (DESIGN §14), the format every CI test reporter reads (GitHub
 * Actions reporters, GitLab's junit artifacts, Jenkins' junit step): one <testsuite> per suite,
 * one <testcase> per case; a `changed` case is a <failure> listing its differences, a `failed`
 * one an <error> with its cause; a case the handler did not take twice (chaos duplicates,
 * `not_idempotent`) is a <failure> of type not_idempotent with the reason. Event types and handler answers are sender-controlled: every
 * text is escaped, and characters XML 1.0 cannot hold are replaced, so the file always parses.
 */

export interface JunitCase {
  case: number;
  provider: string;
  event_type: string | null;
  verdict: Verdict;
  ms: number | null;
  status: number | null;
  expected_status: number | null;
  diff: readonly Difference[];
  diff_truncated: boolean;
  reason: string | null;
  warning: string | null;
  idempotency?: IdempotencyVerdict | null;
}

export interface JunitRun {
  suite: string;
  targetUrl: string;
  /** ISO time the run started. */
  startedAt: string;
  durationMs: number;
  cases: readonly JunitCase[];
}

export function junitXml(run: JunitRun): string {
  const failures = run.cases.filter((result) => result.verdict === 'changed').length;
  const errors = run.cases.filter((result) => result.verdict === 'failed').length;
  const time = seconds(run.durationMs);
  const stamp = run.startedAt.replace(/\.\d+Z$/, '').replace(/Z$/, '');
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="switchboard" tests="${run.cases.length}" failures="${failures}" errors="${errors}" time="${time}">`,
    `  <testsuite name="${attr(run.suite)}" tests="${run.cases.length}" failures="${failures}" errors="${errors}" skipped="0" time="${time}" timestamp="${attr(stamp)}" hostname="localhost">`,
    `    <properties><property name="target_url" value="${attr(run.targetUrl)}"/></properties>`,
  ];
  for (const result of run.cases) {
    const name = `#${result.case} ${result.provider} ${result.event_type ?? '(no type)'}`;
    const open = `    <testcase classname="${attr(run.suite)}" name="${attr(name)}" time="${seconds(result.ms ?? 0)}"`;
    const notes = [result.verdict === 'new' ? 'new: no expectation yet, this answer was not compared' : null, result.reason, result.warning].filter((note) => note !== null);
    const out = notes.length > 0 ? `      <system-out>${text(notes.join('\n'))}</system-out>` : null;
    if (result.verdict === 'changed' && result.idempotency === 'not_idempotent') {
      const reason = result.reason ?? 'not idempotent: a duplicate did not get a 2xx';
      const body = [reason, ...result.diff.map(describeDifference)].join('\n') + (result.diff_truncated ? '\n… more differences (50 listed)' : '');
      lines.push(`${open}>`, `      <failure message="${attr(reason)}" type="not_idempotent">${text(body)}</failure>`);
      if (result.warning) lines.push(`      <system-out>${text(result.warning)}</system-out>`);
      lines.push('    </testcase>');
    } else if (result.verdict === 'changed') {
      const message = `${result.diff.length}${result.diff_truncated ? '+' : ''} difference${result.diff.length === 1 ? '' : 's'}${result.status !== result.expected_status ? `, status ${result.expected_status} → ${result.status}` : ''}`;
      const body = result.diff.map(describeDifference).join('\n') + (result.diff_truncated ? '\n… more differences (50 listed)' : '');
      lines.push(`${open}>`, `      <failure message="${attr(message)}" type="changed">${text(body)}</failure>`);
      if (out) lines.push(out);
      lines.push('    </testcase>');
    } else if (result.verdict === 'failed') {
      lines.push(`${open}>`, `      <error message="${attr(result.reason ?? 'not delivered')}" type="failed">${text(result.reason ?? 'not delivered')}</error>`);
      if (result.warning) lines.push(`      <system-out>${text(result.warning)}</system-out>`);
      lines.push('    </testcase>');
    } else if (out) {
      lines.push(`${open}>`, out, '    </testcase>');
    } else {
      lines.push(`${open}/>`);
    }
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

/** `$.data.object.amount changed: 1000 → 999` — the line a reporter shows. */
export function describeDifference(difference: Difference): string {
  const value = (v: unknown) => JSON.stringify(v) ?? 'undefined';
  if (difference.change === 'added') return `${difference.path} added: ${value(difference.after)}`;
  if (difference.change === 'removed') return `${difference.path} removed (was ${value(difference.before)})`;
  return `${difference.path} changed: ${value(difference.before)} → ${value(difference.after)}`;
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** What XML 1.0 cannot hold at all (C0 controls but tab, newline, return; lone surrogates; U+FFFE/F). */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function text(value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attr(value: string): string {
  return text(value).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}
