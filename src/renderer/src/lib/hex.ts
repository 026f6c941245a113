/**
 * A classic hex dump: offset, 16 bytes in two groups of 8, and the printable ASCII column.
 * `00000000  7b 22 61 22 3a 31 7d                              |{"a":1}|`
 */

export const HEX_BYTES_PER_LINE = 16;

export function hexLine(bytes: Uint8Array, offset: number): string {
  const slice = bytes.subarray(offset, offset + HEX_BYTES_PER_LINE);
  let hex = '';
  let ascii = '';
  for (let i = 0; i < HEX_BYTES_PER_LINE; i++) {
    if (i === 8) hex += ' ';
    const byte = slice[i];
    if (byte === undefined) {
      hex += '   ';
      continue;
    }
    hex += `${byte.toString(16).padStart(2, '0')} `;
    ascii += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.';
  }
  return `${offset.toString(16).padStart(8, '0')}  ${hex} |${ascii}|`;
}

/** The dump of `bytes`, at most `maxLines` lines (large payloads are paged in the UI). */
export function hexDump(bytes: Uint8Array, maxLines = Number.POSITIVE_INFINITY): string[] {
  const lines: string[] = [];
  for (let offset = 0; offset < bytes.length && lines.length < maxLines; offset += HEX_BYTES_PER_LINE) {
    lines.push(hexLine(bytes, offset));
  }
  return lines;
}
