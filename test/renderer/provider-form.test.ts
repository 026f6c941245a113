import { describe, expect, it } from 'vitest';
import type { ProviderView } from '../../src/shared/api';
import { emptyForm, formFromView, formToInput, parseAnswerRules, withQuickFailure } from '../../src/renderer/src/lib/provider-form';

const view: ProviderView = {
  status: { name: 'stripe', kind: 'stripe', family: 'webhook', trust_mode: 'signed', enabled: true, secret_status: 'configured', path: '/webhooks/stripe', status: 'listening' },
  config: { name: 'stripe', kind: 'stripe', enabled: true, forward_to: ['http://localhost:3000/stripe'], secrets: [{ source: 'env', env: 'STRIPE_SECRET', present: true }, { source: 'value' }], tolerance_s: 120 },
  receive_url: 'http://127.0.0.1:7777/webhooks/stripe',
  public_url: null,
  forward_targets: ['http://localhost:3000/stripe'],
  forward_problems: [],
};

describe('provider form', () => {
  it('keeps existing secrets by index and never holds their values', () => {
    const form = formFromView(view);
    expect(form.secrets).toEqual([
      { source: 'keep', index: 0, view: { source: 'env', env: 'STRIPE_SECRET', present: true } },
      { source: 'keep', index: 1, view: { source: 'value' } },
    ]);
    const result = formToInput({ ...form, secrets: [...form.secrets.slice(1), { source: 'value', value: 'whsec_new' }] });
    expect(result).toEqual({
      input: { name: 'stripe', kind: 'stripe', enabled: true, forward_to: ['http://localhost:3000/stripe'], secrets: [{ keep: 1 }, { value: 'whsec_new' }], answer: [], tolerance_s: 120 },
    });
  });

  it('drops blank secret rows and reports what is missing in words', () => {
    expect(formToInput({ ...emptyForm(), name: 'github', secrets: [{ source: 'env', env: ' ' }] })).toEqual({
      input: { name: 'github', kind: 'github', enabled: true, forward_to: [], secrets: [], answer: [] },
    });
    const bad = formToInput({ ...emptyForm(), name: 'Git Hub', kind: 'discord', public_key: 'nope', tolerance_s: '-3' });
    expect('errors' in bad && bad.errors).toEqual([expect.stringMatching(/^Name/), expect.stringMatching(/^Public key/), expect.stringMatching(/^Tolerance/)]);
  });

  it('builds queue providers with their Redis URL source', () => {
    expect(formToInput({ ...emptyForm(), name: 'jobs', kind: 'redis-stream', stream: 'jobs', url: { source: 'env', env: 'REDIS_URL' } })).toEqual({
      input: { name: 'jobs', kind: 'redis-stream', enabled: true, forward_to: [], url: { env: 'REDIS_URL' }, stream: 'jobs' },
    });
    const noChannels = formToInput({ ...emptyForm(), name: 'deploys', kind: 'redis-pubsub' });
    expect('errors' in noChannels && noChannels.errors[0]).toMatch(/Channels/);
  });

  it('edits answer rules as JSON, names a bad rule by its path, and the quick failure goes first', () => {
    const rules = withQuickFailure('[{"when":{"event_type":"invoice.*"},"status":503}]', 3, 500);
    expect(JSON.parse(rules)).toEqual([{ status: 500, first_attempts: 3 }, { when: { event_type: 'invoice.*' }, status: 503, delay_ms: 0 }]);
    const result = formToInput({ ...emptyForm(), name: 'stripe', kind: 'stripe', secrets: [], answer: rules });
    expect('input' in result && result.input.answer).toEqual([
      { status: 500, first_attempts: 3, delay_ms: 0 },
      { when: { event_type: 'invoice.*' }, status: 503, delay_ms: 0 },
    ]);
    expect(parseAnswerRules('[{"status":600}]')).toEqual({ error: expect.stringMatching(/^Answer rules: answer\[0\]\.status: an HTTP status from 200 to 599/) });
    expect(parseAnswerRules('[{"status": 503,}]')).toEqual({ error: expect.stringMatching(/not valid JSON/) });
    const bad = formToInput({ ...emptyForm(), name: 'stripe', kind: 'stripe', secrets: [], answer: '[{"status":503,"delay_ms":40000}]' });
    expect('errors' in bad && bad.errors).toEqual([expect.stringMatching(/answer\[0\]\.delay_ms/)]);
  });
});
