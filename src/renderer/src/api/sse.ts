/**
 * A Server-Sent Events parser for a fetch() stream. EventSource cannot send the bearer token
 * the control port requires, so the renderer reads /api/live with fetch and parses it here.
 * Handles chunks split anywhere (mid-line, mid-CRLF), comment lines and multi-line data.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const newline = this.buffer.search(/\r\n|\r|\n/);
      if (newline < 0) return;
      // A lone "\r" at the end may be the first half of "\r\n": wait for the next chunk.
      if (this.buffer[newline] === '\r' && newline === this.buffer.length - 1) return;
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + width);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onData(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
  }
}
