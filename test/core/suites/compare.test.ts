import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ANSWER_BODY_BYTES, compareAnswers, cutValue, learnNoise, type Answer } from '../../../src/core/suites/compare.js';
import { checkIgnorePatterns, formatJsonPath, IgnoreRules } from '../../../src/core/suites/json-paths.js';

function answer(body: string | Buffer, status = 200, headers: Record<string, string> = {}): Answer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return { status, headers, body: new Uint8Array(bytes.subarray(0, ANSWER_BODY_BYTES)), size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

const rules = (ignore: string[] = [], compareHeaders: string[] = []) => ({ ignore: new IgnoreRules(ignore), compareHeaders });
const json = (value: unknown) => JSON.stringify(value);

describe('comparing answers', () => {
  it('compares JSON as JSON: key order and whitespace never matter', () => {
    const result = compareAnswers(answer('{"a":1,"b":[1,2],"c":{"d":null}}'), answer('{ "c": {"d": null},\n "b": [1, 2], "a": 1 }'), rules());
    expect(result).toEqual({ differences: [], count: 0, truncated: false, note: null });
  });

  it('names each difference by JSONPath, added, removed or changed, with before and after', () => {
    const before = { data: { object: { amount: 1000, currency: 'usd' } }, items: [{ sku: 'a' }, { sku: 'b' }, { sku: 'c' }], old: true };
    const after = { data: { object: { amount: 999, currency: 'usd', livemode: false } }, items: [{ sku: 'a' }, { sku: 'b' }, { sku: 'x' }] };
    const { differences } = compareAnswers(answer(json(before)), answer(json(after)), rules());
    expect(differences).toEqual(
      expect.arrayContaining([
        { path: '$.data.object.amount', change: 'changed', before: 1000, after: 999 },
        { path: '$.data.object.livemode', change: 'added', after: false },
        { path: '$.items[2].sku', change: 'changed', before: 'c', after: 'x' },
        { path: '$.old', change: 'removed', before: true },
      ]),
    );
    expect(differences).toHaveLength(4);
  });

  it('writes odd member names in brackets', () => {
    expect(formatJsonPath(['a b', 0, 'c-d', 'ok_1'])).toBe("$['a b'][0]['c-d'].ok_1");
    const { differences } = compareAnswers(answer('{"x-y":1}'), answer('{"x-y":2}'), rules());
    expect(differences[0]!.path).toBe("$['x-y']");
  });

  it('reports a status change as the difference "status"', () => {
    const { differences } = compareAnswers(answer('{"ok":true}', 200), answer('{"ok":true}', 500), rules());
    expect(differences).toEqual([{ path: 'status', change: 'changed', before: 200, after: 500 }]);
  });

  it('compares the headers in compare_headers only', () => {
    const result = compareAnswers(
      answer('', 204, { 'content-type': 'a', 'x-version': '1', date: 'Mon' }),
      answer('', 204, { 'content-type': 'b', 'x-trace': 't', date: 'Tue' }),
      rules([], ['content-type', 'x-version', 'x-trace']),
    );
    expect(result.differences).toEqual([
      { path: 'headers.content-type', change: 'changed', before: 'a', after: 'b' },
      { path: 'headers.x-version', change: 'removed', before: '1' },
      { path: 'headers.x-trace', change: 'added', after: 't' },
    ]);
  });

  it('compares bodies that are not JSON byte for byte, and says so', () => {
    expect(compareAnswers(answer('OK'), answer('OK'), rules()).count).toBe(0);
    const text = compareAnswers(answer('OK'), answer('ok'), rules());
    expect(text).toMatchObject({ count: 1, note: 'not JSON: compared byte for byte', differences: [{ path: 'body', change: 'changed', before: 'OK', after: 'ok' }] });
    const binary = compareAnswers(answer(Buffer.from([0xff, 0x00])), answer(Buffer.from([0xff, 0x01])), rules());
    expect(binary.differences[0]).toEqual({ path: 'body', change: 'changed', before: 'base64:/wA=', after: 'base64:/wE=' });
    const oneSide = compareAnswers(answer('{"a":1}'), answer('<html>'), rules());
    expect(oneSide.note).toBe('this body is not JSON: compared byte for byte');
  });

  it('compares bodies over 64 KiB by size and SHA-256 beyond the stored part, and says where they differ', () => {
    const big = randomBytes(ANSWER_BODY_BYTES + 1000);
    const same = compareAnswers(answer(big), answer(Buffer.from(big)), rules());
    expect(same.count).toBe(0);
    expect(same.note).toMatch(/over 64 KiB is compared by size and SHA-256/);
    const tail = Buffer.from(big);
    tail[tail.length - 1]! ^= 1;
    const late = compareAnswers(answer(big), answer(tail), rules());
    expect(late.differences).toEqual([{ path: 'body', change: 'changed', before: expect.stringMatching(/^66536 bytes, sha256 [0-9a-f]{64}$/), after: expect.stringMatching(/^66536 bytes, sha256 /) }]);
    expect(late.note).toMatch(/the first 64 KiB are equal: they differ beyond/);
    const early = Buffer.from(big);
    early[10]! ^= 1;
    expect(compareAnswers(answer(big), answer(early), rules()).note).toMatch(/they differ from byte 10/);
  });

  it('compares the roots themselves: an array against an object, a number against a string', () => {
    expect(compareAnswers(answer('[1]'), answer('{"0":1}'), rules()).differences).toEqual([{ path: '$', change: 'changed', before: [1], after: { 0: 1 } }]);
    expect(compareAnswers(answer('1'), answer('"1"'), rules()).differences).toEqual([{ path: '$', change: 'changed', before: 1, after: '1' }]);
    expect(compareAnswers(answer('true'), answer('true '), rules()).count).toBe(0);
  });

  it('lists at most 50 differences, counts them all, and cuts long values with …', () => {
    const before = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]));
    const after = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i + 1]));
    const result = compareAnswers(answer(json(before)), answer(json(after)), rules());
    expect(result).toMatchObject({ count: 80, truncated: true });
    expect(result.differences).toHaveLength(50);
    expect(cutValue('x'.repeat(300))).toBe(`${'x'.repeat(200)}…`);
    expect(cutValue({ long: 'y'.repeat(300) })).toMatch(/^\{"long":"y+…$/);
    expect(cutValue({ short: 1 })).toEqual({ short: 1 });
  });
});

describe('ignores', () => {
  const before = { received_at: 1, id: 'a', data: { id: 'b', items: [{ id: 'c', updated_at: 1, sku: 'x' }, { updated_at: 1 }] }, meta: { trace: 1, deep: { x: 1 } } };
  const after = { received_at: 2, id: 'A', data: { id: 'B', items: [{ id: 'C', updated_at: 2, sku: 'y' }, { updated_at: 2 }] }, meta: { trace: 2, deep: { x: 2 } } };
  const paths = (ignore: string[]) => compareAnswers(answer(json(before)), answer(json(after)), rules(ignore)).differences.map((d) => d.path).sort();

  it('takes out what JSONPath patterns match: names, * for one member, .. for any depth, and everything under a match', () => {
    expect(paths([])).toHaveLength(9);
    expect(paths(['$.received_at', '$..id', '$.data.items[*].updated_at', '$.meta'])).toEqual(['$.data.items[0].sku']);
    expect(paths(['$.*'])).toEqual([]);
    expect(paths(['$.data.*[0].sku'])).toContain('$.received_at');
    expect(paths(['$.data.*[0].sku'])).not.toContain('$.data.items[0].sku');
  });

  it('evaluates the other forms (unions, slices) with the library on both bodies', () => {
    expect(paths(['$.data.items[0,1].updated_at', '$.data.items[:1].id'])).not.toContain('$.data.items[1].updated_at');
    expect(paths(['$.data.items[0,1].updated_at', '$.data.items[:1].id'])).not.toContain('$.data.items[0].id');
    // a member only the received body has is matched there
    const added = compareAnswers(answer('{"a":1}'), answer('{"a":1,"extra":{"n":1}}'), rules(['$[extra,other]']));
    expect(added.count).toBe(0);
  });

  it('never ignores the status, and refuses patterns that are not JSONPath or would run code', () => {
    expect(compareAnswers(answer('{}', 200), answer('{}', 201), rules(['$..*'])).count).toBe(1);
    expect(() => checkIgnorePatterns(['received_at'])).toThrow(/starts with \$/);
    expect(() => checkIgnorePatterns(['$.items[?(@.x==1)]'])).toThrow(/filter and script expressions/);
    expect(() => checkIgnorePatterns(['$.a', ''])).toThrow(/1 to 500 characters/);
    expect(checkIgnorePatterns(['$.a', '$.a', '$..id'])).toEqual(['$.a', '$..id']);
  });
});

describe('learning noise from two sends', () => {
  it('learns what differed, with [*] for indexes inside a path', () => {
    const first = answer(json({ received: true, ts: 1764000000001, request_id: 'req_1', items: [{ at: 1 }, { at: 2 }], log: ['a'] }));
    const second = answer(json({ received: true, ts: 1764000000002, request_id: 'req_2', items: [{ at: 3 }, { at: 4 }], log: ['b'] }));
    const noise = learnNoise(first, second, new IgnoreRules([]));
    expect(noise.paths.sort()).toEqual(['$.items[*].at', '$.log[0]', '$.request_id', '$.ts']);
    expect(noise.warning).toBeNull();
    // and with those ignores the two sends compare equal
    expect(compareAnswers(first, second, rules(noise.paths)).count).toBe(0);
  });

  it('learns nothing it already ignores, nothing from equal answers, and says what it cannot learn', () => {
    const a = answer('{"ts":1,"id":1}');
    const b = answer('{"ts":2,"id":1}');
    expect(learnNoise(a, b, new IgnoreRules(['$.ts'])).paths).toEqual([]);
    expect(learnNoise(a, answer('{"id":1, "ts":1}'), new IgnoreRules([]))).toEqual({ paths: [], warning: null });
    expect(learnNoise(answer('time=1'), answer('time=2'), new IgnoreRules([])).warning).toMatch(/not JSON and differed between two sends/);
    expect(learnNoise(answer('1'), answer('2'), new IgnoreRules([])).warning).toMatch(/whole body differed/);
    expect(learnNoise(answer(randomBytes(70_000)), answer(randomBytes(70_000)), new IgnoreRules([])).warning).toMatch(/over 64 KiB/);
    expect(learnNoise(answer('{"a\'b":1}'), answer('{"a\'b":2}'), new IgnoreRules([])).warning).toMatch(/cannot be written as a JSONPath/);
  });
});
