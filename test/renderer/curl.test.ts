/// <reference types="node" />
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCurl, shellQuote } from '../../src/renderer/src/lib/curl';

// The oracle is a real shell and a real curl: what the command sends is what a server receives.
let server: Server;
let url: string;
let last: { headers: IncomingHttpHeaders; body: Buffer } | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      last = { headers: req.headers, body: Buffer.concat(chunks) };
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const run = (command: string) =>
  new Promise<void>((resolve, reject) => execFile('sh', ['-c', `${command} --silent --show-error --output /dev/null`], (error) => (error ? reject(error) : resolve())));

describe('copy as cURL', () => {
  it('re-sends the exact body and headers, quoting whatever the payload holds', async () => {
    const payload = `{"title":"it's \\"quoted\\" $HOME \`uname\` ; rm -rf /","emoji":"🚀"}`;
    const command = buildCurl({
      url,
      headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-note': "O'Brien" },
      payload,
      encoding: 'utf8',
    });
    await run(command);
    expect(last!.body.toString('utf8')).toBe(payload);
    expect(last!.headers['x-github-event']).toBe('issues');
    expect(last!.headers['x-note']).toBe("O'Brien");
  });

  it('leaves out redacted values and hop-by-hop headers', () => {
    const command = buildCurl({
      url,
      headers: { host: 'example.ngrok.app', 'content-length': '3', 'x-hub-signature-256': '«redacted»', 'x-forwarded-for': '1.2.3.4', 'x-kept': 'yes' },
      payload: '{}',
      encoding: 'utf8',
    });
    expect(command).not.toMatch(/host:|content-length|redacted|x-forwarded/i);
    expect(command).toContain(`-H 'x-kept: yes'`);
  });

  it('sends binary bodies byte for byte', async () => {
    const bytes = Buffer.from([0x00, 0xff, 0x27, 0x0a, 0x80, 0x41]);
    await run(buildCurl({ url, headers: { 'content-type': 'application/octet-stream' }, payload: bytes.toString('base64'), encoding: 'base64' }));
    expect(last!.body.equals(bytes)).toBe(true);
  });

  it('quotes for POSIX shells', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
