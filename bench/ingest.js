// Ingest benchmark: signed GitHub deliveries at 16 connections into `switchboard serve`
// (verify → group-committed PGlite insert → 200), beside a bare node:http server answering the
// same requests in the same run. Numbers are only comparable within one run on one machine.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const root = join(import.meta.dirname, '..');
const SECRET = 'bench-secret-0123456789abcdef';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const BODY = JSON.stringify({ ref: 'refs/heads/main', pad: 'x'.repeat(1950) }).slice(0, 2048);
const SIGNATURE = `sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`;

function startChild(args, env, ready) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const url = ready(out);
      if (url) resolve({ child, url });
    });
    child.on('exit', (code) => reject(new Error(`child exited with ${code}: ${out}`)));
  });
}

const BARE_SERVER = `
  const http = require('node:http');
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => { const body = JSON.stringify({ id: 1, duplicate: false }); res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
  });
  server.listen(0, '127.0.0.1', () => console.log('bare http://127.0.0.1:' + server.address().port));
`;

async function load(url) {
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': SIGNATURE },
    body: BODY,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'x-github-delivery': `bench-${process.pid}-${n++}` } }) }],
  });
  return {
    perSecond: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export async function benchIngest() {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-bench-'));
  await writeFile(join(dataDir, 'config.json'), JSON.stringify({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'BENCH_SECRET' }] }] }));
  const results = {};
  const bare = await startChild(['-e', BARE_SERVER], {}, (out) => /bare (\S+)/.exec(out)?.[1]);
  try {
    await load(`${bare.url}/webhooks/github`); // warm-up
    results.bare = await load(`${bare.url}/webhooks/github`);
  } finally {
    bare.child.kill();
  }
  const sb = await startChild(
    ['bin/switchboard.js', 'serve', '--data-dir', dataDir, '--port', '0', '--control-port', '0'],
    { BENCH_SECRET: SECRET },
    (out) => /receiver\s+(http:\/\/\S+)/.exec(out)?.[1],
  );
  try {
    await load(`${sb.url}/webhooks/github`); // warm-up: JIT, PGlite buffers
    results.switchboard = await load(`${sb.url}/webhooks/github`);
  } finally {
    sb.child.kill('SIGTERM');
    await new Promise((resolve) => sb.child.on('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
  const row = (name, r) =>
    `${name.padEnd(30)} ${String(Math.round(r.perSecond)).padStart(9)}/s ${String(r.p50).padStart(6)} ms ${String(r.p99).padStart(6)} ms   non-2xx ${r.non2xx}, errors ${r.errors}`;
  console.log(`\ningest: signed GitHub deliveries (2 KB), ${CONNECTIONS} connections, ${DURATION_S} s each, same run`);
  console.log(`${''.padEnd(30)} ${'throughput'.padStart(11)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}`);
  console.log(row('bare node:http (no work)', results.bare));
  console.log(row('switchboard (verify + store)', results.switchboard));
  console.log(`switchboard / bare throughput: ${(results.switchboard.perSecond / results.bare.perSecond).toFixed(2)}×`);
  console.log(`targets: ≥ 8000 stored/s and p99 ≤ 15 ms at 16 connections → ${results.switchboard.perSecond >= 8000 && results.switchboard.p99 <= 15 ? 'met' : 'NOT met'}`);
  return results;
}
