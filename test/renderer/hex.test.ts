import { describe, expect, it } from 'vitest';
import { hexDump, hexLine } from '../../src/renderer/src/lib/hex';

describe('hex dump', () => {
  it('formats offset, two groups of eight and the ASCII column', () => {
    const bytes = new TextEncoder().encode('{"event":"push"}\n\x00\xff');
    const lines = hexDump(bytes);
    expect(lines).toEqual([
      '00000000  7b 22 65 76 65 6e 74 22  3a 22 70 75 73 68 22 7d  |{"event":"push"}|',
      '00000010  0a 00 c3 bf                                       |....|',
    ]);
  });

  it('pads a short last line so the ASCII column stays aligned', () => {
    const full = hexLine(new Uint8Array(16), 0);
    const short = hexLine(new Uint8Array([0x41]), 0);
    expect(short.indexOf('|')).toBe(full.indexOf('|'));
    expect(short.endsWith('|A|')).toBe(true);
  });

  it('stops at maxLines and handles empty input', () => {
    expect(hexDump(new Uint8Array(1000), 3)).toHaveLength(3);
    expect(hexDump(new Uint8Array(0))).toEqual([]);
    expect(hexDump(new Uint8Array(40))[2]!.startsWith('00000020')).toBe(true);
  });
});
