import { describe, expect, it } from 'vitest';
import { prettyJson } from '../../src/renderer/src/screens/replay-panel';

describe('prettyJson (the replay editor)', () => {
  it('indents a minified payload and keeps every value as spelled', () => {
    const text = '{"id":12345678901234567890,"amount":1.0,"s":"a\\"b,{c}:","e":"\\u00e9","list":[1,[],{}],"o":{"k":null}}';
    const pretty = prettyJson(text)!;
    expect(pretty).toBe(
      ['{', '  "id": 12345678901234567890,', '  "amount": 1.0,', '  "s": "a\\"b,{c}:",', '  "e": "\\u00e9",', '  "list": [', '    1,', '    [],', '    {}', '  ],', '  "o": {', '    "k": null', '  }', '}'].join('\n'),
    );
    expect(JSON.parse(pretty)).toEqual(JSON.parse(text));
  });

  it('leaves what is not JSON alone', () => {
    expect(prettyJson('payload=%7B%7D&x=1')).toBeNull();
    expect(prettyJson('{"cut":')).toBeNull();
    expect(prettyJson('"just a string"')).toBeNull();
  });
});
