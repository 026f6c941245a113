import { describe, expect, it } from 'vitest';
import { githubVerifier } from '../../../src/core/providers/github.js';

const typeOf = (body: string, event = 'issues') =>
  githubVerifier.describe({ headers: { 'x-github-event': event, 'x-github-delivery': 'd-1' }, rawBody: Buffer.from(body), query: new URLSearchParams(), publicUrl: null, nowMs: 0 }).eventType;

describe('github describe', () => {
  it('reads the top-level action, however its key is written', () => {
    expect(typeOf('{"action":"opened","number":1}')).toBe('issues.opened');
    // A key with an escaped letter is the same key once parsed (the fast path must not miss it).
    expect(typeOf('{"\\u0061ction":"closed"}')).toBe('issues.closed');
    expect(typeOf('{"act\\u0069on":"edited"}')).toBe('issues.edited');
  });

  it('is the event alone without a top-level action', () => {
    expect(typeOf('{"ref":"refs/heads/main"}', 'push')).toBe('push');
    expect(typeOf('{"issue":{"action":"nested"}}')).toBe('issues');
    expect(typeOf('{"actions":"x",""action"":1}')).toBe('issues');
    expect(typeOf('not json "action"')).toBe('issues');
  });
});
