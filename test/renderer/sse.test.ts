import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/renderer/src/api/sse';

function parse(chunks: string[]): string[] {
  const out: string[] = [];
  const parser = new SseParser((data) => out.push(data));
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

describe('SSE parser', () => {
  it('reads data frames and skips comments', () => {
    expect(parse([': switchboard live\n\ndata: {"a":1}\n\n: ping\n\ndata: {"b":2}\n\n'])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('survives frames split anywhere, including between \\r and \\n', () => {
    const text = 'data: {"type":"event"}\r\n\r\ndata: second\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse([text.slice(0, cut), text.slice(cut)]), `cut at ${cut}`).toEqual(['{"type":"event"}', 'second']);
    }
    expect(parse([...text])).toEqual(['{"type":"event"}', 'second']);
  });

  it('joins multi-line data and ignores other fields and unfinished frames', () => {
    expect(parse(['event: x\nid: 3\ndata: one\ndata: two\n\ndata:no-space\n\ndata: pending'])).toEqual(['one\ntwo', 'no-space']);
  });
});
