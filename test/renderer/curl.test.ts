/// <reference types="node" />
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCurl, shellQuote } from '../../src/renderer/src/lib/curl';

// The oracle is a real shell and a real curl: what the command sends is what a server receives.
let server: Server;
let url: string;
let last: { headers: IncomingHttpHeaders; body: Buffer } | undefined;
const scratch = mkdtempSync(join(tmpdir(), 'switchboard-curl-'));
const canary = join(scratch, 'pwned');

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
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const run = (command: string, shell = 'sh') =>
  new Promise<void>((resolve, reject) =>
    execFile(shell, ['-c', `${command} --silent --show-error --output /dev/null`], { cwd: scratch }, (error) => (error ? reject(error) : resolve())),
  );

/** Bodies a stranger could have sent, each of which has broken a naive command somewhere. */
const HOSTILE_TEXT: [string, string][] = [
  ['a file reference', '@/etc/passwd'],
  ['stdin reference', '@-'],
  ['a relative file reference', '@package.json'],
  ['an option', '--output /tmp/x'],
  ['a dash', '-'],
  ['command substitution', `$(touch ${canary})`],
  ['backticks', `\`touch ${canary}\``],
  ['variables', '$HOME ${PATH} $0 $$'],
  ['quotes', `it's "quoted" '' \\' \\"`],
  ['newlines', 'line one\nline two\r\nline three\n\n'],
  ['printf directives', '%s %d %n %% \\n \\0 \\x41'],
  ['a here-doc delimiter', 'EOF\nEOF'],
  ['unicode', '🚀 ünïcödé \u2028 \u00a0'],
  ['an empty body', ''],
  ['JSON', '{"title":"it\'s \\"quoted\\" $HOME `uname` ; rm -rf /","emoji":"🚀"}'],
];

describe('copy as cURL', () => {
  it.each(HOSTILE_TEXT)('sends %s byte for byte, in sh and bash, and runs nothing', async (_name, payload) => {
    for (const shell of ['sh', 'bash']) {
      last = undefined;
      await run(buildCurl({ url, headers: { 'content-type': 'text/plain' }, payload, encoding: 'utf8' }), shell);
      expect(last!.body.toString('utf8'), shell).toBe(payload);
    }
    expect(existsSync(canary)).toBe(false);
  });

  it('never passes the body as a curl argument', () => {
    const command = buildCurl({ url, headers: {}, payload: '@/etc/passwd', encoding: 'utf8' });
    expect(command).toMatch(/--data-binary @-$/);
    expect(command).not.toMatch(/--data-binary '@/);
  });

  it('re-sends the exact body and headers, quoting whatever the payload holds', async () => {
    const payload = `{"title":"it's \\"quoted\\" $HOME \`uname\` ; rm -rf /","emoji":"🚀"}`;
    const command = buildCurl({
      url,
      headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-note': "O'Brien $(id)" },
      payload,
      encoding: 'utf8',
    });
    await run(command);
    expect(last!.body.toString('utf8')).toBe(payload);
    expect(last!.headers['x-github-event']).toBe('issues');
    expect(last!.headers['x-note']).toBe("O'Brien $(id)");
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

  it('sends binary bodies (NUL, invalid UTF-8) byte for byte', async () => {
    const bytes = Buffer.from([0x00, 0xff, 0x27, 0x0a, 0x80, 0x41, 0x40]);
    await run(buildCurl({ url, headers: { 'content-type': 'application/octet-stream' }, payload: bytes.toString('base64'), encoding: 'base64' }));
    expect(last!.body.equals(bytes)).toBe(true);
  });

  it('sends text holding NUL (valid UTF-8, but no shell argument can carry it) exactly', async () => {
    const payload = '{"a":"x\u0000y"}';
    await run(buildCurl({ url, headers: {}, payload, encoding: 'utf8' }));
    expect(last!.body.equals(Buffer.from(payload))).toBe(true);
  });

  it('quotes for POSIX shells', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
