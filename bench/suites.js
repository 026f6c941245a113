// Suites benchmark (DESIGN §14): 1,000 cases run against a handler that answers in ~1 ms, at
// concurrency 8, beside a plain undici loop sending the same requests at the same concurrency —
// the ratio is the figure (target: the run within 3 s). Also: the first run (every case sent
// twice, to learn noise), the same suite as a file with no instance (`suite run --file`), and
// the latency of reads and deliveries while a run goes on next to them (§17). Numbers are only
// comparable within one run on one machine.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { Agent, request } from 'undici';

const CASES = Number(process.env.BENCH_SUITE_CASES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_SUITE_CONCURRENCY ?? 8);
const SECRET = 'whsec_bench_suites_0123456789abcdef';
const stripe = new Stripe('sk_test_unused');

// The developer's handler, in its own process as it would be: verifies nothing, answers in ~1 ms
// with a little JSON that has noise in it (a time and a request id), like many real handlers.
const HANDLER = `
  const http = require('node:http');
  const { randomUUID } = require('node:crypto');
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => {
      const body = JSON.stringify({ received: true, ts: Date.now(), request_id: randomUUID(), n: ++n % 1 });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }, 1));
  });
  server.keepAliveTimeout = 5000;
  server.listen(0, '127.0.0.1', () => console.log('handler http://127.0.0.1:' + server.address().port));
`;

function startHandler() {
  const child = spawn(process.execPath, ['-e', HANDLER], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const url = /handler (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ url, stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`the handler exited with ${code}`)));
  });
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Reads (listEvents, 50) and deliveries (one Stripe event) every `everyMs`, each timed, until stopped. */
function probe(sb, everyMs = 20) {
  const reads = [];
  const delivers = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      let started = performance.now();
      await sb.store.listEvents({ limit: 50 });
      reads.push(performance.now() - started);
      const { body, headers } = stripeDelivery(1);
      started = performance.now();
      await fetch(`${sb.url.receiver}/webhooks/stripe`, { method: 'POST', headers, body }).then((answer) => answer.arrayBuffer());
      delivers.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };
  const running = loop();
  return {
    async stop() {
      stopped = true;
      await running;
      return { reads, delivers };
    },
  };
}

function stripeDelivery(amount) {
  const body = JSON.stringify({ id: `evt_${randomUUID().replaceAll('-', '').slice(0, 24)}`, object: 'event', type: 'invoice.paid', data: { object: { amount, currency: 'usd', customer: 'cus_bench', lines: { data: [{ amount, description: 'Pro plan' }] } } } });
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }) } };
}

async function waitRun(sb, id) {
  for (;;) {
    // As the CLI and the UI follow a run: its row alone, a few times a second.
    const { run } = await sb.api.getSuiteRun({ id, cases: false });
    if (run.status !== 'running') return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The same requests as the suite run sends (its cases' bodies, signed as it signs them), by a plain loop. */
async function plainLoop(url, bodies, concurrency, options) {
  const agent = new Agent();
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const headers = { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }) };
      const response = await request(url, { method: 'POST', headers, body, dispatcher: agent, ...options });
      await response.body.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - started;
  await agent.close();
  return ms;
}

export async function benchSuites() {
  const { createSwitchboard } = await import('../dist/core/switchboard.js');
  const { runSuiteFile } = await import('../dist/core/suites/standalone.js');
  const handler = await startHandler();
  const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-bench-suites-'));
  const sb = createSwitchboard({
    dataDir,
    config: { providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'BENCH_STRIPE_SECRET' }] }], receiver: { port: 0 }, control: { port: 0 } },
    env: { BENCH_STRIPE_SECRET: SECRET },
    logger: { info() {}, warn() {}, error: (message) => console.error(message) },
    rendererDir: null,
  });
  await sb.start();
  try {
    console.log(`\nsuites: ${CASES} cases against a handler answering in ~1 ms (its own process), concurrency ${CONCURRENCY}`);
    const bodies = [];
    for (let i = 0; i < CASES; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, CASES - i) }, async (_, j) => {
          const { body, headers } = stripeDelivery(1000 + i + j);
          const answer = await fetch(`${sb.url.receiver}/webhooks/stripe`, { method: 'POST', headers, body });
          if (answer.status !== 200) throw new Error(`delivery answered ${answer.status}`);
          await answer.arrayBuffer();
        }),
      );
    }
    let started = performance.now();
    const { suite } = await sb.api.saveSuite({ name: 'bench', filter: { provider: 'stripe', limit: CASES } });
    console.log(`  save a suite of ${suite.cases} cases from the stored events  ${Math.round(performance.now() - started)} ms`);
    const { cases } = await sb.api.getSuite({ name: 'bench' });
    for (let i = 0; i < cases.length; i += 500) {
      const events = await sb.store.getEvents(cases.slice(i, i + 500).map((entry) => entry.source_event_id));
      const byId = new Map(events.map((event) => [event.id, Buffer.from(event.payload).toString('utf8')]));
      cases.slice(i, i + 500).forEach((entry, k) => (bodies[i + k] = byId.get(entry.source_event_id)));
    }

    started = performance.now();
    let { run } = await sb.api.runSuite({ name: 'bench', target_url: `${handler.url}/hooks`, concurrency: CONCURRENCY });
    run = await waitRun(sb, run.id);
    console.log(`  first run (every case sent twice, noise learned: ${run.learned_ignores.join(', ')})  ${Math.round(performance.now() - started)} ms  new ${run.new}`);

    started = performance.now();
    ({ run } = await sb.api.runSuite({ name: 'bench', concurrency: CONCURRENCY }));
    run = await waitRun(sb, run.id);
    const suiteMs = performance.now() - started;
    if (run.pass !== CASES) throw new Error(`expected ${CASES} passes, got ${JSON.stringify(run)}`);

    const plainMs = await plainLoop(`${handler.url}/hooks`, bodies, CONCURRENCY, {});
    const plainNewConnMs = await plainLoop(`${handler.url}/hooks`, bodies, CONCURRENCY, { reset: true });
    console.log(`  suite run (re-signed, judged with learned ignores, stored)  ${Math.round(suiteMs)} ms  pass ${run.pass}  (target ≤ 3000 ms)`);
    console.log(`  plain undici loop, same requests, keep-alive               ${Math.round(plainMs)} ms  → ratio ${(suiteMs / plainMs).toFixed(2)}`);
    console.log(`  plain undici loop, a connection per request (as replays)   ${Math.round(plainNewConnMs)} ms  → ratio ${(suiteMs / plainNewConnMs).toFixed(2)}`);

    const file = join(dataDir, 'bench.suite.ndjson');
    await writeFile(file, (await sb.api.exportSuite({ name: 'bench' })).ndjson);
    const config = join(dataDir, 'ci.json');
    await writeFile(config, JSON.stringify({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'BENCH_STRIPE_SECRET' }] }] }));
    started = performance.now();
    const fromFile = await runSuiteFile({ file, target: `${handler.url}/hooks`, configPath: config, accept: false, concurrency: CONCURRENCY, env: { BENCH_STRIPE_SECRET: SECRET }, version: 'bench' });
    console.log(`  the same suite from its file, no instance (suite run --file)  ${Math.round(performance.now() - started)} ms  pass ${fromFile.pass}`);

    // Reads and deliveries, alone and then beside a run (§17: a run never blocks ingest or reads).
    const idle = probe(sb);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const quiet = await idle.stop();
    const busy = probe(sb);
    ({ run } = await sb.api.runSuite({ name: 'bench', concurrency: CONCURRENCY }));
    await waitRun(sb, run.id);
    const during = await busy.stop();
    const line = (what, idleMs, busyMs) => `  ${what.padEnd(40)} alone p50 ${percentile(idleMs, 50).toFixed(1)} / p99 ${percentile(idleMs, 99).toFixed(1)} ms   beside a run p50 ${percentile(busyMs, 50).toFixed(1)} / p99 ${percentile(busyMs, 99).toFixed(1)} ms`;
    console.log(line('a read (listEvents, 50)', quiet.reads, during.reads));
    console.log(line('a delivery (signed Stripe event)', quiet.delivers, during.delivers));
  } finally {
    await sb.stop();
    handler.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
