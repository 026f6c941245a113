import { describe, expect, it } from 'vitest';
import { junitXml, type JunitCase } from '../../../src/core/suites/junit.js';
import { expectJunitShape } from './junit-shape.js';

const base = { provider: 'stripe', ms: 12, status: 200, expected_status: 200, diff: [], diff_truncated: false, reason: null, warning: null } satisfies Partial<JunitCase>;

describe('JUnit XML', () => {
  it('one testsuite, one testcase per case: changed is a failure listing the differences, failed an error with its cause', () => {
    const xml = junitXml({
      suite: 'payments',
      targetUrl: 'http://localhost:3000/webhooks?a=1&b=2',
      startedAt: '2026-11-30T09:41:07.123Z',
      durationMs: 1234,
      cases: [
        { ...base, case: 1, event_type: 'checkout.session.completed', verdict: 'pass' },
        { ...base, case: 2, event_type: 'invoice.paid', verdict: 'changed', status: 500, diff: [{ path: 'status', change: 'changed', before: 200, after: 500 }, { path: '$.amount', change: 'changed', before: 1000, after: 999 }] },
        { ...base, case: 3, event_type: 'charge.refunded', verdict: 'failed', status: null, ms: 1500, reason: 'no complete response within 1500 ms (replay.timeout_ms)' },
        { ...base, case: 4, event_type: null, verdict: 'new', warning: 'not re-signed: provider "stripe" is not in ci.json' },
      ],
    });
    const { suites, cases } = expectJunitShape(xml);
    expect(suites[0]).toMatchObject({ '@name': 'payments', '@tests': '4', '@failures': '1', '@errors': '1', '@time': '1.234', '@timestamp': '2026-11-30T09:41:07' });
    expect(cases.map((test) => [test['@classname'], test['@name']])).toEqual([
      ['payments', '#1 stripe checkout.session.completed'],
      ['payments', '#2 stripe invoice.paid'],
      ['payments', '#3 stripe charge.refunded'],
      ['payments', '#4 stripe (no type)'],
    ]);
    const failure = (cases[1]!.failure as Record<string, unknown>[])[0]!;
    expect(failure['@message']).toBe('2 differences, status 200 → 500');
    expect(failure['#text']).toBe('status changed: 200 → 500\n$.amount changed: 1000 → 999');
    const error = (cases[2]!.error as Record<string, unknown>[])[0]!;
    expect(error['@message']).toMatch(/no complete response within 1500 ms/);
    expect(cases[3]!['system-out']).toMatch(/new: no expectation yet[\s\S]*not re-signed/);
  });

  it('stays well-formed whatever a sender or a handler wrote', () => {
    const nasty = 'a"b<c>&d\u0000\u001b[2J\uD800]]>';
    const xml = junitXml({
      suite: 'x',
      targetUrl: 'http://localhost/',
      startedAt: '2026-01-01T00:00:00Z',
      durationMs: 1,
      cases: [{ ...base, case: 1, event_type: nasty, verdict: 'changed', diff: [{ path: `$['${nasty}']`, change: 'added', after: nasty }], reason: nasty, warning: nasty }],
    });
    const { cases } = expectJunitShape(xml);
    expect(cases[0]!['@name']).toBe('#1 stripe a"b<c>&d\uFFFD\uFFFD[2J\uFFFD]]>');
  });

  it('a case that is not idempotent (chaos duplicates) is a failure of its own type, with the reason', () => {
    const reason = 'not idempotent: the first send got 200, duplicate 1 got 409 — a provider would keep retrying or disable the endpoint';
    const xml = junitXml({
      suite: 'payments',
      targetUrl: 'http://localhost:3000/webhooks',
      startedAt: '2026-11-30T09:41:07.123Z',
      durationMs: 20,
      cases: [
        { ...base, case: 1, event_type: 'invoice.paid', verdict: 'changed', idempotency: 'not_idempotent', reason },
        { ...base, case: 2, event_type: 'invoice.paid', verdict: 'pass', idempotency: 'idempotent' },
      ],
    });
    const { suites, cases } = expectJunitShape(xml);
    expect(suites[0]).toMatchObject({ '@tests': '2', '@failures': '1', '@errors': '0' });
    const failure = (cases[0]!.failure as Record<string, unknown>[])[0]!;
    expect(failure).toMatchObject({ '@type': 'not_idempotent', '@message': reason, '#text': reason });
    expect(cases[1]!.failure).toBeUndefined();
  });
});
