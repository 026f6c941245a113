import type { IncomingMessage } from 'node:http';

/**
 * Reads a request body of at most `maxBytes` — the receiver's, MCP's and the control API's one
 * reader. Defends against memory exhaustion: a declared Content-Length over the cap is refused
 * before a byte is read, and a streamed excess stops reading at once (the caller answers 413 and
 * closes the connection rather than read the rest).
 */

export type BodyResult =
  | { tooLarge: true; declared: number | undefined; seen: number; aborted?: false }
  | { tooLarge: false; aborted: true }
  | { tooLarge: false; aborted: false; bytes: Buffer };

export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declaredHeader = req.headers['content-length'];
  const declared = declaredHeader !== undefined ? Number(declaredHeader) : undefined;
  if (declared !== undefined && Number.isFinite(declared) && declared > maxBytes) {
    req.pause();
    return Promise.resolve({ tooLarge: true, declared, seen: 0 });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    let settled = false;
    const finish = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) {
        req.pause();
        finish({ tooLarge: true, declared, seen });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => finish({ tooLarge: false, aborted: false, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
    req.on('error', () => finish({ tooLarge: false, aborted: true }));
    req.on('close', () => {
      if (!req.complete) finish({ tooLarge: false, aborted: true });
    });
  });
}
