import { describe, expect, it } from 'vitest';
import { AnswerRules } from '../../../src/core/receiver/answer-rules.js';
import type { AnswerRule } from '../../../src/shared/delivery-lab.js';

// A path rule (DESIGN §15) looks for its value's bytes before it parses the payload (parsing a
// 6 KB push costs ~28 µs a delivery). That shortcut must never change a decision: every way JSON
// can spell the same value — escapes, \u sequences, other number forms — still matches.

const bytes = (text: string) => new TextEncoder().encode(text);
const decide = (rule: AnswerRule, payload: string) => new AnswerRules().decide('p', [rule], { eventType: 'order.paid', payload: bytes(payload), attempt: 1 })?.number ?? null;
const at = (path: string, equals: unknown) => ({ status: 503, delay_ms: 0, when: { path, equals } }) as AnswerRule;

describe('answer rules on a payload path', () => {
  it('matches a value however the JSON spells it', () => {
    expect(decide(at('ref', 'refs/heads/main'), '{"ref":"refs/heads/main"}')).toBe(1);
    expect(decide(at('ref', 'refs/heads/main'), '{"ref":"refs\\/heads\\/main"}')).toBe(1);
    expect(decide(at('data.status', 'failed'), '{"data":{"status":"\\u0066ailed"}}')).toBe(1);
    expect(decide(at('data.status', 'échoué'), '{"data":{"status":"échoué"}}')).toBe(1);
    expect(decide(at('data.status', 'échoué'), '{"data":{"status":"\\u00e9chou\\u00e9"}}')).toBe(1);
    expect(decide(at('data.status', 'say "no"'), '{"data":{"status":"say \\"no\\""}}')).toBe(1);
    expect(decide(at('amount', 100), '{"amount":1e2}')).toBe(1);
    expect(decide(at('amount', 1), '{"amount":1.0}')).toBe(1);
    expect(decide(at('live', true), '{ "live" : true }')).toBe(1);
    expect(decide(at('gone', null), '{"gone":null}')).toBe(1);
    expect(decide(at('items.1.sku', 'b'), '{"items":[{"sku":"a"},{"sku":"b"}]}')).toBe(1);
    expect(decide(at('meta', { a: 1 }), '{"meta":{"a":1}}')).toBe(1);
  });

  it('does not match a value that is elsewhere, absent, or of another type', () => {
    expect(decide(at('ref', 'refs/heads/main'), '{"ref":"refs/heads/dev","base":"refs/heads/main"}')).toBeNull();
    expect(decide(at('ref', 'refs/heads/main'), '{"other":1}')).toBeNull();
    expect(decide(at('live', true), '{"live":"true"}')).toBeNull();
    expect(decide(at('amount', 100), '{"amount":"100"}')).toBeNull();
    expect(decide(at('ref', 'main'), 'not json, but main is in it')).toBeNull();
    expect(decide(at('ref', 'main'), '')).toBeNull();
  });

  it('reads own properties only, whatever the path names', () => {
    expect(decide(at('__proto__', 'x'), '{"a":"x"}')).toBeNull();
    expect(decide(at('constructor.name', 'Object'), '{"a":"Object"}')).toBeNull();
  });
});
