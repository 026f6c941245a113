import { describe, expect, it } from 'vitest';
import { decodeFormBody, isFormContentType } from '../../src/renderer/src/lib/form';
import { parseHeaderLines } from '../../src/renderer/src/lib/headers';

describe('form bodies', () => {
  it('decodes a Slack slash command and the JSON inside an interactivity payload', () => {
    const fields = decodeFormBody('token=%C2%ABredacted%C2%BB&command=%2Fdeploy&text=api+now&payload=%7B%22type%22%3A%22block_actions%22%7D');
    expect(fields).toEqual([
      { name: 'token', value: '«redacted»' },
      { name: 'command', value: '/deploy' },
      { name: 'text', value: 'api now' },
      { name: 'payload', value: '{"type":"block_actions"}', json: { type: 'block_actions' } },
    ]);
  });

  it('says "not a form" for JSON, prose and empty bodies', () => {
    expect(decodeFormBody('{"a":"b=c"}')).toBeNull();
    expect(decodeFormBody('hello world = yes')).toBeNull();
    expect(decodeFormBody('')).toBeNull();
    expect(isFormContentType('application/x-www-form-urlencoded; charset=utf-8')).toBe(true);
    expect(isFormContentType('application/json')).toBe(false);
  });
});

describe('replay header overrides', () => {
  it('parses "Name: value" lines and names the bad ones', () => {
    expect(parseHeaderLines('X-Trace: abc\n\n  Content-Type: text/plain  \nnot a header\n: empty\nX-Url: http://a:b')).toEqual({
      headers: { 'x-trace': 'abc', 'content-type': 'text/plain', 'x-url': 'http://a:b' },
      errors: ['line 4: expected "Name: value"', 'line 5: expected "Name: value"'],
    });
  });
});
