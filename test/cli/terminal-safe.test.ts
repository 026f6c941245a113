import { describe, expect, it } from 'vitest';
import { terminalSafe, terminalSafeBlock } from '../../src/cli/terminal-safe.js';

describe('terminal-safe text (#22.6)', () => {
  it('escapes every C0, DEL and C1 control character, and nothing else', () => {
    for (let code = 0; code <= 0xa0; code++) {
      const char = String.fromCharCode(code);
      const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
      expect(terminalSafe(char), `U+${code.toString(16)}`).toBe(control ? `\\x${code.toString(16).padStart(2, '0')}` : char);
    }
    expect(terminalSafe('ü € 😀 \\x1b')).toBe('ü € 😀 \\x1b');
  });

  it('is idempotent; a block keeps its newlines and tabs but not a carriage return', () => {
    const evil = '\u001b]0;title\u0007\u009b2K\r\nnext\tline';
    expect(terminalSafe(terminalSafe(evil))).toBe(terminalSafe(evil));
    expect(terminalSafe(evil)).toBe('\\x1b]0;title\\x07\\x9b2K\\x0d\\x0anext\\x09line');
    expect(terminalSafeBlock(evil)).toBe('\\x1b]0;title\\x07\\x9b2K\\x0d\nnext\tline');
  });
});
