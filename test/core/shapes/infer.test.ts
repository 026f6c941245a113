import { describe, expect, it } from 'vitest';
import { childPath, DRIFT_MIN_EVENTS, emptyShape, MAX_SHAPE_DEPTH, MAX_SHAPE_PATHS, observe } from '../../../src/core/shapes/infer.js';
import { describeFields } from '../../../src/core/shapes/service.js';

const T = '2026-12-02T00:00:00.000000Z';

describe('shape inference (DESIGN §16)', () => {
  it('keeps paths, types, presence, required-ness and masked examples', () => {
    const shape = emptyShape();
    observe(shape, { ref: 'refs/heads/main', n: 1, tags: ['a', 2], user: { login: 'octo', api_token: 'ghp_secret_value' }, opt: true }, T);
    observe(shape, { ref: 'refs/heads/dev', n: null, tags: [], user: { login: 'cat', api_token: 'x' } }, T);
    const fields = new Map(describeFields(shape).map((field) => [field.path, field]));
    expect(fields.get('ref')).toMatchObject({ types: ['string'], presence: 1, required: true, example: '"refs/heads/main"' });
    expect(fields.get('n')!.types.sort()).toEqual(['null', 'number']);
    expect(fields.get('opt')).toMatchObject({ presence: 0.5, required: false });
    expect(fields.get('tags[]')!.types.sort()).toEqual(['number', 'string']);
    expect(fields.get('user.api_token')!.example).toBe('«redacted»');
    expect(JSON.stringify(describeFields(shape))).not.toContain('ghp_secret_value');
  });

  it('escapes odd keys in paths and never pollutes an object', () => {
    const shape = emptyShape();
    const payload = JSON.parse('{"a.b": 1, "x[0]": 2, "nul\\u0000": 3, "__proto__": {"polluted": true}, "constructor": 4}') as unknown;
    observe(shape, payload, T);
    const paths = describeFields(shape).map((field) => field.path);
    expect(paths).toEqual(expect.arrayContaining(['["a.b"]', '["x[0]"]', '["nul\\u0000"]', '["__proto__"]', '["__proto__"].polluted', 'constructor']));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(childPath('a', 'b')).toBe('a.b');
  });

  it('bounds paths at 2,000 (truncated) and depth at 16, in bounded time', () => {
    const wide: Record<string, number> = {};
    for (let i = 0; i < 100_000; i++) wide[`k${i}`] = i;
    const shape = emptyShape();
    const started = performance.now();
    observe(shape, wide, T);
    expect(shape.fields.size).toBe(MAX_SHAPE_PATHS);
    expect(shape.truncated).toBe(true);
    const deepShape = emptyShape();
    observe(deepShape, JSON.parse(`${'{"d":'.repeat(10_000)}1${'}'.repeat(10_000)}`) as unknown, T);
    expect(Math.max(...describeFields(deepShape).map((field) => field.path.split('.').length))).toBe(MAX_SHAPE_DEPTH);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('marks drift once a type has 20 events: added, missing, type_changed', () => {
    const shape = emptyShape();
    const base = () => ({ id: 1, name: 'a', nested: { x: 1 } });
    expect(observe(shape, { ...base(), extra: 1 }, T)).toEqual([]); // too early to judge
    for (let i = 1; i < DRIFT_MIN_EVENTS; i++) expect(observe(shape, base(), T).filter((mark) => mark.change !== 'missing')).toEqual([]);
    expect(observe(shape, base(), T)).toEqual([]); // extra was seen once: absent is normal
    const drift = observe(shape, { id: 'one', nested: {}, fresh: [1] }, T);
    expect(drift).toEqual(
      expect.arrayContaining([
        { path: 'id', change: 'type_changed', was: 'number', now: 'string' },
        { path: 'name', change: 'missing', was: 'string' },
        { path: 'nested.x', change: 'missing', was: 'number' },
        { path: 'fresh', change: 'added', now: 'array' },
        { path: 'fresh[]', change: 'added', now: 'number' },
      ]),
    );
    expect(drift).toHaveLength(5);
    // A missing object is one mark, not one per member.
    expect(observe(shape, { id: 1, name: 'a' }, T)).toEqual([{ path: 'nested', change: 'missing', was: 'object' }]);
  });
});
