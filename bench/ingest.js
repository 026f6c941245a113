// Ingest benchmark: signed GitHub deliveries at 16 connections into `switchboard serve`
// (verify → journal append → 200; the applier stores in batches), beside 0.2's store-then-ack and
// a bare node:http server answering the same requests, all in the same run. Numbers are only
// comparable within one run on one machine.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMs } from './scale.js';

const root = join(import.meta.dirname, '..');
const SECRET = 'bench-secret-0123456789abcdef';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const BODY = JSON.stringify({ ref: 'refs/heads/main', pad: 'x'.repeat(1950) }).slice(0, 2048);
const sign = (body) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

/**
 * A push as GitHub sends it (~6 KB: the repository's ~40 URL templates, two commits, pusher,
 * sender): it compresses about 3× where the padded body above compresses ~40×, so the
 * database's TOAST (compression, then an out-of-line copy) shows in its cost.
 */
export function githubPush() {
  const api = 'https://api.github.com/repos/octo-org/hello-world';
  const repository = { id: 186853002, node_id: 'MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=', name: 'hello-world', full_name: 'octo-org/hello-world', private: false };
  repository.owner = { name: 'octo-org', login: 'octo-org', id: 21031067, avatar_url: 'https://avatars1.githubusercontent.com/u/21031067?v=4', url: 'https://api.github.com/users/octo-org', html_url: 'https://github.com/octo-org', type: 'Organization', site_admin: false };
  for (const name of ['forks', 'keys', 'collaborators', 'teams', 'hooks', 'issue_events', 'events', 'assignees', 'branches', 'tags', 'blobs', 'git_tags', 'git_refs', 'trees', 'statuses', 'languages', 'stargazers', 'contributors', 'subscribers', 'subscription', 'commits', 'git_commits', 'comments', 'issue_comment', 'contents', 'compare', 'merges', 'archive', 'downloads', 'issues', 'pulls', 'milestones', 'notifications', 'labels', 'releases', 'deployments']) {
    repository[`${name}_url`] = `${api}/${name}{/sha}`;
  }
  Object.assign(repository, { html_url: 'https://github.com/octo-org/hello-world', description: 'An example repository', created_at: 1557933565, updated_at: '2026-11-30T15:20:41Z', pushed_at: 1557933657, clone_url: 'https://github.com/octo-org/hello-world.git', default_branch: 'main', language: 'TypeScript', size: 1204, stargazers_count: 12, watchers_count: 12, forks_count: 1, open_issues_count: 2 });
  const commit = (n) => ({
    id: `6113728f27ae82c7b1a177c8d03f9e96e0adf24${n}`,
    tree_id: 'f9d2a07e9488b91af2641b26b9407fe22a451433',
    distinct: true,
    message: `Handle checkout.session.completed in the order service (#${n})`,
    timestamp: '2026-11-30T15:20:30Z',
    url: `https://github.com/octo-org/hello-world/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf24${n}`,
    author: { name: 'Ada', email: 'ada@example.com', username: 'ada' },
    committer: { name: 'GitHub', email: 'noreply@github.com', username: 'web-flow' },
    added: [], removed: [], modified: ['README.md', `src/orders/checkout-${n}.ts`],
  });
  const sender = { login: 'ada', id: 21031067, avatar_url: 'https://avatars1.githubusercontent.com/u/21031067?v=4', url: 'https://api.github.com/users/ada', html_url: 'https://github.com/ada', type: 'User', site_admin: false };
  return JSON.stringify({ ref: 'refs/heads/main', before: '6113728f27ae82c7b1a177c8d03f9e96e0adf246', after: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c', created: false, deleted: false, forced: false, compare: `${api}/compare/6113728f27ae...0d1a26e67d8f`, commits: [commit(1), commit(2)], head_commit: commit(2), repository, pusher: { name: 'ada', email: 'ada@example.com' }, sender });
}
const PUSH = githubPush();

function startChild(args, env, ready, cwd = root) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const url = ready(out);
      if (url) resolve({ child, url, banner: out });
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

/** Delivery ids stay unique across every load of a run: a repeated id is a redelivery (dedupe), not a new event. */
let deliveries = 0;

/** `redeliver`: a list of delivery ids already sent, cycled through instead of new ones. */
async function load(url, connections = CONNECTIONS, redeliver = null, body = BODY) {
  const first = deliveries;
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    duration: DURATION_S,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': sign(body) },
    body,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, 'x-github-delivery': redeliver ? redeliver[next++ % redeliver.length] : `bench-${process.pid}-${deliveries++}` },
        }),
      },
    ],
  });
  return {
    ids: redeliver ? [] : Array.from({ length: deliveries - first }, (_, i) => `bench-${process.pid}-${first + i}`),
    perSecond: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/**
 * A fresh `switchboard serve` on its own data dir; counts the bytes its stdout prints. `cwd` is
 * the checkout whose built core runs: `BENCH_BASELINE_ROOT` names an older one (built with
 * `npm run build:core`), measured beside this one in the same rounds.
 */
async function startServe(extraArgs, env = {}, cwd = root, answer = undefined) {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-bench-'));
  await writeFile(join(dataDir, 'config.json'), JSON.stringify({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'BENCH_SECRET' }], ...(answer ? { answer } : {}) }] }));
  const sb = await startChild(
    ['bin/switchboard.js', 'serve', '--data-dir', dataDir, '--port', '0', '--control-port', '0', ...extraArgs],
    { BENCH_SECRET: SECRET, ...env },
    // The whole banner: the receiver, the control URL and the token.
    (out) => (/Bearer ([\w-]+)/.test(out) && /MCP\s+http/.test(out) ? /receiver\s+(http:\/\/\S+)/.exec(out)?.[1] : undefined),
    cwd,
  );
  const serve = {
    ...sb,
    printed: 0,
    runs: [],
    dataDir,
    token: /Bearer ([\w-]+)/.exec(sb.banner)[1],
    control: /MCP\s+(http:\/\/\S+)\/mcp/.exec(sb.banner)[1],
  };
  // The terminal stream is read as a terminal reads it: every byte, as it comes.
  sb.child.stdout.on('data', (chunk) => (serve.printed += chunk.length));
  serve.stop = async () => {
    sb.child.kill('SIGTERM');
    await new Promise((resolve) => sb.child.on('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  };
  return serve;
}

/**
 * How long after the last answer every acknowledged delivery is visible: one read through the
 * control API, which waits for the journal's applier (read-your-writes), so its duration is the
 * applier's lag at the end of the load.
 */
async function visibleAfter(serve) {
  const started = performance.now();
  await newestId(serve);
  return performance.now() - started;
}

async function newestId(serve) {
  const response = await fetch(`${serve.control}/api/listEvents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ limit: 1 }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`listEvents answered ${response.status}: ${JSON.stringify(body)}`);
  return body.events[0]?.id ?? 0;
}

const mean = (runs, key) => runs.reduce((sum, run) => sum + run[key], 0) / runs.length;
/** A server's rounds: the mean rate and the range of them. */
const roundRates = (serve) => {
  const values = serve.runs.map((run) => run.perSecond);
  return { min: Math.min(...values), max: Math.max(...values), mean: values.reduce((sum, v) => sum + v, 0) / values.length };
};

const combine = (runs) => ({
  perSecond: mean(runs, 'perSecond'),
  p50: mean(runs, 'p50'),
  p99: Math.max(...runs.map((run) => run.p99)),
  non2xx: mean(runs, 'non2xx'),
  errors: mean(runs, 'errors'),
  total: mean(runs, 'total'),
  visibleMs: Math.max(...runs.map((run) => run.visibleMs ?? 0)),
});

/** A scratch PostgreSQL database for the team-mode row, or null when no server answers. */
async function scratchPostgres() {
  const admin = process.env.SWITCHBOARD_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: admin });
  try {
    await client.connect();
  } catch {
    return null;
  }
  const name = `switchboard_bench_${process.pid}`;
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await client.end();
    },
  };
}

/**
 * Waits until none of the servers uses more than a few % of a core: after a load, each catches
 * up in the background (the search indexer copies the new events' text), and that must not be
 * measured as part of the next server's run.
 */
async function quiesce(servers) {
  const deadline = performance.now() + 180_000;
  for (;;) {
    const before = servers.map((serve) => cpuMs(serve.child.pid));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const busy = servers.some((serve, i) => cpuMs(serve.child.pid) - before[i] > 25);
    if (!busy || performance.now() > deadline) return;
  }
}

async function loadServe(serve, connections = CONNECTIONS, all = [serve], redeliver = null, body = BODY) {
  await quiesce(all);
  const run = await load(`${serve.url}/webhooks/github`, connections, redeliver, body);
  run.visibleMs = await visibleAfter(serve);
  return run;
}

/**
 * `BENCH_INGEST_COSTS=1`: only the side-by-side costs, in more rounds (BENCH_STREAM_ROUNDS,
 * default two per server, rotated) — the journal as shipped against no shape upkeep, answer rules that never
 * match, and the baseline checkout if BENCH_BASELINE_ROOT names one. The full run's one pair of
 * rounds leaves ±9 % between two identical servers on this machine; these differences are smaller.
 */
async function benchCosts() {
  const ROUNDS = process.env.BENCH_STREAM_ROUNDS ? Number(process.env.BENCH_STREAM_ROUNDS) : null;
  const quiet = await startServe(['--quiet']);
  const rules = await startServe(['--quiet'], {}, root, COST_RULES);
  const noShapes = await startServe(['--quiet'], { SWITCHBOARD_SHAPES: 'off' });
  const baselineRoot = process.env.BENCH_BASELINE_ROOT;
  const baseline = baselineRoot ? await startServe(['--quiet'], {}, baselineRoot) : null;
  const servers = [quiet, rules, noShapes, ...(baseline ? [baseline] : [])];
  try {
    for (const serve of servers) await loadServe(serve, CONNECTIONS, servers); // warm-up
    // Rotated, not reversed: with three servers alternating order leaves the middle one always in
    // the middle (after another server's load, never after its own); rotation puts each server in
    // each place equally often.
    const rounds = ROUNDS ?? 2 * servers.length;
    for (let round = 0; round < rounds; round++) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length]);
      for (const serve of order) serve.runs.push(await loadServe(serve, CONNECTIONS, servers));
    }
  } finally {
    for (const serve of servers) await serve.stop();
  }
  const [q, r, n, b] = [quiet, rules, noShapes, baseline].map((serve) => (serve ? combine(serve.runs) : null));
  const spread = (serve) => `${Math.round(roundRates(serve).min)}–${Math.round(roundRates(serve).max)}/s`;
  console.log(`\ningest costs: signed GitHub deliveries (2 KB), ${DURATION_S} s each, ${CONNECTIONS} conns, ${quiet.runs.length} rotated rounds (means; the range of the rounds)`);
  console.log(`  journal --quiet (as shipped)               ${Math.round(q.perSecond)}/s  (${spread(quiet)})  p99 ${q.p99} ms`);
  console.log(`  answer rules (none matching)               ${Math.round(r.perSecond)}/s  (${spread(rules)})  p99 ${r.p99} ms`);
  console.log(`  SWITCHBOARD_SHAPES=off                     ${Math.round(n.perSecond)}/s  (${spread(noShapes)})  p99 ${n.p99} ms`);
  if (b) console.log(`  baseline checkout (${baselineRoot})  ${Math.round(b.perSecond)}/s  (${spread(baseline)})  p99 ${b.p99} ms`);
  const rulesCost = 1 - r.perSecond / q.perSecond;
  const shapesCost = 1 - q.perSecond / n.perSecond;
  // How far one server's own rounds spread (max − min over mean): a difference between servers
  // smaller than this is not one this run can see.
  const roundSpread = Math.max(...[quiet, rules, noShapes].map((serve) => (roundRates(serve).max - roundRates(serve).min) / roundRates(serve).mean));
  const verdict = (cost, target) => (cost <= target ? 'met' : cost < roundSpread ? `inside the rounds' own spread of ${(roundSpread * 100).toFixed(0)} %: not conclusive` : 'NOT met');
  console.log(`answer rules: throughput cost ${(rulesCost * 100).toFixed(1)} % (target ≤ 3 %) → ${verdict(rulesCost, 0.03)}; shape upkeep: ${(shapesCost * 100).toFixed(1)} % (target ≤ 5 %) → ${verdict(shapesCost, 0.05)}`);
  if (b) console.log(`this checkout / baseline: ${(q.perSecond / b.perSecond).toFixed(2)}× throughput, p99 ${q.p99} ms against ${b.p99} ms`);
  // The rules' own work, without the noise of two servers: what deciding costs a delivery, as a
  // share of the receiving thread's time at the rate just measured.
  const { AnswerRules } = await import('../dist/core/receiver/answer-rules.js');
  const payload = new TextEncoder().encode(PUSH);
  const answers = new AnswerRules();
  const decideUs = [];
  for (let round = 0; round < 5; round++) {
    const t = performance.now();
    for (let i = 0; i < 20_000; i++) answers.decide('github', COST_RULES, { eventType: 'push', payload, attempt: 1 });
    decideUs.push(((performance.now() - t) * 1000) / 20_000);
  }
  const us = [...decideUs].sort((x, y) => x - y)[2];
  const share = (us * q.perSecond) / 1e6;
  console.log(`answer rules' own work: ${us.toFixed(1)} µs a delivery (a ${(PUSH.length / 1024).toFixed(1)} KB push; median of 5 × 20,000 decisions) = ${(share * 100).toFixed(1)} % of one thread at ${Math.round(q.perSecond)}/s (target ≤ 3 %) → ${share <= 0.03 ? 'met' : 'NOT met'}`);
}

/** Rules that never match a push (a type glob, a payload path): what having rules costs by itself. */
const COST_RULES = [
  { when: { event_type: 'never.*' }, status: 503, delay_ms: 0 },
  { when: { path: 'ref', equals: 'refs/heads/never' }, status: 500, delay_ms: 0 },
];

/**
 * `BENCH_INGEST_COSTS=baseline BENCH_BASELINE_ROOT=<older checkout>`: this checkout beside the older
 * one alone, in rotated rounds — what a change to the ingest path costs (issue #21's restructure:
 * "within noise"). Shape upkeep is off here (SWITCHBOARD_SHAPES=off) when the older checkout
 * predates it, so both servers do the same work; BENCH_BASELINE_SHAPES=on keeps it.
 * BENCH_CANDIDATE_ROOT puts another built checkout in this one's place (two old commits compared).
 */
async function benchAgainstBaseline() {
  const baselineRoot = process.env.BENCH_BASELINE_ROOT;
  if (!baselineRoot) throw new Error('BENCH_INGEST_COSTS=baseline needs BENCH_BASELINE_ROOT (an older checkout built with npm run build:core)');
  const shapesEnv = process.env.BENCH_BASELINE_SHAPES === 'on' ? {} : { SWITCHBOARD_SHAPES: 'off' };
  const candidateRoot = process.env.BENCH_CANDIDATE_ROOT ?? root;
  const here = await startServe(['--quiet'], shapesEnv, candidateRoot);
  const baseline = await startServe(['--quiet'], {}, baselineRoot);
  const servers = [here, baseline];
  const rounds = process.env.BENCH_STREAM_ROUNDS ? Number(process.env.BENCH_STREAM_ROUNDS) : 6;
  try {
    for (const serve of servers) await loadServe(serve, CONNECTIONS, servers); // warm-up
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const serve of order) serve.runs.push(await loadServe(serve, CONNECTIONS, servers));
    }
  } finally {
    for (const serve of servers) await serve.stop();
  }
  const line = (serve) => {
    const all = combine(serve.runs);
    return { ...roundRates(serve), p99: all.p99, visible: all.visibleMs };
  };
  const [h, b] = [line(here), line(baseline)];
  const spread = Math.max((h.max - h.min) / h.mean, (b.max - b.min) / b.mean);
  const candidate = candidateRoot === root ? 'this checkout' : 'candidate';
  console.log(`\ningest, ${candidateRoot === root ? 'this checkout' : candidateRoot} beside ${baselineRoot}: signed GitHub deliveries (2 KB), ${DURATION_S} s each, ${CONNECTIONS} conns, ${rounds} alternating rounds (means; the range of the rounds)`);
  console.log(`  ${candidate}${shapesEnv.SWITCHBOARD_SHAPES ? ' (SWITCHBOARD_SHAPES=off)' : ''}  ${Math.round(h.mean)}/s  (${Math.round(h.min)}–${Math.round(h.max)}/s)  p99 ${h.p99} ms  visible after ≤ ${Math.round(h.visible)} ms`);
  console.log(`  baseline checkout           ${Math.round(b.mean)}/s  (${Math.round(b.min)}–${Math.round(b.max)}/s)  p99 ${b.p99} ms  visible after ≤ ${Math.round(b.visible)} ms`);
  // Round by round: the two loads of a round ran back to back, so their ratio is free of the
  // machine's drift across the run.
  const pairs = here.runs.map((run, i) => run.perSecond / baseline.runs[i].perSecond);
  console.log(`  round by round (${candidate} / baseline): ${pairs.map((pair) => pair.toFixed(2)).join(' ')}`);
  // The order alternates, so each server follows its own load in one kind of round and the
  // other's in the next; a server may gain from either. The geometric mean of the two kinds'
  // means is the estimate free of that.
  const kind = (first) => pairs.filter((_, i) => (i % 2 === 0) === first);
  const avg = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;
  if (pairs.length >= 2) {
    const [a, z] = [avg(kind(true)), avg(kind(false))];
    console.log(`  first in its round ${a.toFixed(2)}×, second ${z.toFixed(2)}×; free of the order: ${Math.sqrt(a * z).toFixed(2)}×`);
  }
  const ratio = h.mean / b.mean;
  const verdict = Math.abs(1 - ratio) <= spread ? `within the rounds' own spread of ${(spread * 100).toFixed(0)} %` : ratio > 1 ? 'faster, beyond the noise' : 'SLOWER, beyond the noise';
  console.log(`${candidate} / baseline: ${ratio.toFixed(2)}× throughput → ${verdict}`);
}

export async function benchIngest() {
  if (process.env.BENCH_INGEST_COSTS === '1') return benchCosts();
  if (process.env.BENCH_INGEST_COSTS === 'baseline') return benchAgainstBaseline();
  const results = {};
  const bare = await startChild(['-e', BARE_SERVER], {}, (out) => /bare (\S+)/.exec(out)?.[1]);
  try {
    await load(`${bare.url}/webhooks/github`); // warm-up
    results.bare = await load(`${bare.url}/webhooks/github`);
    results.bare64 = await load(`${bare.url}/webhooks/github`, 64);
  } finally {
    bare.child.kill();
  }
  // Same run, same load generator: 0.2's store-then-ack (SWITCHBOARD_JOURNAL=off) beside the
  // journal, and the terminal stream's cost (DESIGN §13: ≤ 5 %) as two journal servers, with and
  // without the stream, loaded in alternating rounds so the machine's drift hits all alike.
  const ROUNDS = Number(process.env.BENCH_STREAM_ROUNDS ?? 2);
  const direct = await startServe(['--quiet'], { SWITCHBOARD_JOURNAL: 'off' });
  const quiet = await startServe(['--quiet']);
  const streaming = await startServe([]);
  // The delivery lab's and the shapes' costs (DESIGN §15 ≤ 3 %, §16 ≤ 5 %), beside `quiet` in the
  // same rounds: a provider whose answer rules are all checked and none matches, and no shape upkeep.
  const rules = await startServe(['--quiet'], {}, root, COST_RULES);
  const noShapes = await startServe(['--quiet'], { SWITCHBOARD_SHAPES: 'off' });
  const baselineRoot = process.env.BENCH_BASELINE_ROOT;
  const baseline = baselineRoot ? await startServe(['--quiet'], {}, baselineRoot) : null;
  const servers = [direct, quiet, streaming, rules, noShapes, ...(baseline ? [baseline] : [])];
  let printed = 0;
  try {
    for (const serve of servers) await load(`${serve.url}/webhooks/github`); // warm-up: JIT, PGlite buffers
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const serve of order) {
        const before = serve.printed;
        serve.runs.push(await loadServe(serve, CONNECTIONS, servers));
        if (serve === streaming) printed += serve.printed - before;
      }
    }
    results.quiet64 = await loadServe(quiet, 64, [direct, quiet, streaming]);
    // A storm of redeliveries of stored events — more distinct ids than the journal keeps in
    // memory (20,000), so most are looked up in the database.
    const stored = quiet.runs.flatMap((run) => run.ids);
    const newestBefore = await newestId(quiet);
    results.redeliveries = await loadServe(quiet, CONNECTIONS, [direct, quiet, streaming], stored);
    results.redeliveries.distinct = stored.length;
    results.redeliveries.storedAnew = (await newestId(quiet)) - newestBefore;
    results.push = await loadServe(quiet, CONNECTIONS, [direct, quiet, streaming], null, PUSH);
    // Ingest with the live-stream cap reached (#22.13): 2,000 streams asked for, the cap's worth
    // open and read (each gets every event), the rest refused with 429.
    const live = await openLiveStreams(quiet, 2_000);
    try {
      results.liveCap = await loadServe(quiet, CONNECTIONS, [direct, quiet, streaming]);
      results.liveCap.open = live.open;
      results.liveCap.refused = live.refused;
    } finally {
      live.close();
    }
  } finally {
    await direct.stop();
    await quiet.stop();
    await streaming.stop();
    await rules.stop();
    await noShapes.stop();
    await baseline?.stop();
  }
  results.rules = combine(rules.runs);
  results.noShapes = combine(noShapes.runs);
  if (baseline) results.baseline = combine(baseline.runs);
  results.direct = combine(direct.runs);
  results.quiet = combine(quiet.runs);
  results.switchboard = combine(streaming.runs);
  results.streamedBytes = printed;

  const pg = process.env.BENCH_POSTGRES === '0' ? null : await scratchPostgres();
  if (pg) {
    const team = await startServe(['--quiet', '--database-url', pg.url]);
    try {
      await load(`${team.url}/webhooks/github`);
      results.postgres = await loadServe(team);
    } finally {
      await team.stop();
      await pg.drop();
    }
  }

  const row = (name, r) =>
    `${name.padEnd(44)} ${String(Math.round(r.perSecond)).padStart(9)}/s ${String(r.p50).padStart(6)} ms ${String(r.p99).padStart(6)} ms ${r.visibleMs === undefined ? '' : `${String(Math.round(r.visibleMs)).padStart(8)} ms`}   non-2xx ${r.non2xx}, errors ${r.errors}`;
  console.log(`\ningest: signed GitHub deliveries (2 KB), ${DURATION_S} s each, same run (visible: first read after the load, waiting for the applier)`);
  console.log(`${''.padEnd(44)} ${'throughput'.padStart(11)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'visible'.padStart(11)}`);
  console.log(row(`bare node:http (no work), ${CONNECTIONS} conns`, results.bare));
  console.log(row(`0.2 store-then-ack (JOURNAL=off), ${CONNECTIONS} conns`, results.direct));
  console.log(row(`journal --quiet, ${CONNECTIONS} conns`, results.quiet));
  console.log(row(`journal + terminal stream, ${CONNECTIONS} conns`, results.switchboard));
  if (results.baseline) console.log(row(`baseline checkout, journal --quiet, ${CONNECTIONS} conns`, results.baseline));
  console.log(row('bare node:http, 64 conns', results.bare64));
  console.log(row('journal --quiet, 64 conns', results.quiet64));
  console.log(row(`redeliveries of ${results.redeliveries.distinct} stored ids, ${CONNECTIONS} conns`, results.redeliveries));
  console.log(`  (events stored by the redeliveries: ${results.redeliveries.storedAnew}, expected 0)`);
  console.log(row(`journal --quiet, ${(PUSH.length / 1024).toFixed(1)} KB GitHub push, ${CONNECTIONS} conns`, results.push));
  if (results.postgres) console.log(row(`PostgreSQL (--database-url), ${CONNECTIONS} conns`, results.postgres));
  console.log(row(`journal --quiet, ${results.liveCap.open} live streams open, ${CONNECTIONS} conns`, results.liveCap));
  console.log(`  (live streams: ${results.liveCap.open} open, ${results.liveCap.refused} of 2,000 refused with 429; ingest with the cap reached / without: ${(results.liveCap.perSecond / results.quiet.perSecond).toFixed(2)}×)`);
  console.log(`journal / bare throughput: ${(results.switchboard.perSecond / results.bare.perSecond).toFixed(2)}× (0.2: ${(results.direct.perSecond / results.bare.perSecond).toFixed(2)}×)`);
  console.log(row(`journal --quiet, answer rules (none matching), ${CONNECTIONS} conns`, results.rules));
  console.log(row(`journal --quiet, SWITCHBOARD_SHAPES=off, ${CONNECTIONS} conns`, results.noShapes));
  const rulesCost = 1 - results.rules.perSecond / results.quiet.perSecond;
  const shapesCost = 1 - results.quiet.perSecond / results.noShapes.perSecond;
  console.log(`answer rules: throughput cost ${(rulesCost * 100).toFixed(1)} % (target ≤ 3 %) → ${rulesCost <= 0.03 ? 'met' : 'NOT met'}; shape upkeep: ${(shapesCost * 100).toFixed(1)} % (target ≤ 5 %) → ${shapesCost <= 0.05 ? 'met' : 'NOT met'}`);
  if (results.baseline) console.log(`this checkout / baseline (${baselineRoot}), journal --quiet: ${(results.quiet.perSecond / results.baseline.perSecond).toFixed(2)}× throughput, p99 ${results.quiet.p99} ms against ${results.baseline.p99} ms`);
  const cost = 1 - results.switchboard.perSecond / results.quiet.perSecond;
  console.log(`terminal stream (${ROUNDS} alternating rounds, means): ${results.streamedBytes} bytes printed for ${Math.round(results.switchboard.total * ROUNDS)} deliveries; throughput cost ${(cost * 100).toFixed(1)} % (target ≤ 5 %) → ${cost <= 0.05 ? 'met' : 'NOT met'}`);
  const micro = await streamCostPerDelivery();
  console.log(`terminal stream in-process: ${micro.bareNs.toFixed(0)} ns per bus event without it, ${micro.streamNs.toFixed(0)} ns with it (${micro.lines} lines written for ${micro.events} events) → ${(micro.streamNs - micro.bareNs).toFixed(0)} ns per delivery = ${(((micro.streamNs - micro.bareNs) / 1e9) * 8000 * 100).toFixed(2)} % of one core at 8,000 deliveries/s`);
  const ratio = results.switchboard.perSecond / results.bare.perSecond;
  const met = results.switchboard.perSecond >= 8000 && results.switchboard.p99 <= 15 && ratio >= 0.17;
  console.log(`targets: ≥ 8000 stored/s, p99 ≤ 15 ms at 16 connections, ≥ 0.17× bare → ${met ? 'met' : 'NOT met'}`);
  return results;
}

/**
 * What the stream adds to each delivery, measured in-process where the machine's noise cannot
 * hide it: bus events emitted at full speed, with and without the stream attached (its timer
 * flushing to a sink that counts what a terminal would receive).
 */
async function streamCostPerDelivery() {
  const { EventBus } = await import('../dist/core/bus.js');
  const { startTerminalStream } = await import('../dist/cli/stream.js');
  const EVENTS = 2_000_000;
  const event = { id: 1, provider: 'github', family: 'webhook', event_type: 'push', external_id: 'd', origin: 'provider', trust_mode: 'signed', verified: true, payload_size: 2048, received_at: new Date().toISOString() };
  const emitAll = async (bus) => {
    const started = process.hrtime.bigint();
    // Bursts of 10,000 with a turn of the event loop between them, as deliveries arrive.
    for (let i = 0; i < EVENTS; i += 10_000) {
      for (let j = 0; j < 10_000; j++) bus.emit('event', event);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return Number(process.hrtime.bigint() - started) / EVENTS;
  };
  const bareBus = new EventBus();
  bareBus.on('event', () => {}); // the SSE/forward listeners are there either way
  const bareNs = await emitAll(bareBus);
  const bus = new EventBus();
  bus.on('event', () => {});
  let lines = 0;
  const stream = startTerminalStream(bus, { format: 'text', color: false, write: (chunk) => (lines += chunk.split('\n').length - 1) });
  const streamNs = await emitAll(bus);
  await new Promise((resolve) => setTimeout(resolve, 1200)); // the last "… more" line
  stream.close();
  return { bareNs, streamNs, lines, events: EVENTS };
}

/** Asks for `count` live streams (GET /api/live) and reads every one that opens. */
async function openLiveStreams(serve, count) {
  const controllers = [];
  let open = 0;
  let refused = 0;
  for (let i = 0; i < count; i++) {
    const controller = new AbortController();
    const response = await fetch(`${serve.control}/api/live`, { headers: { authorization: `Bearer ${serve.token}` }, signal: controller.signal }).catch(() => null);
    if (response?.status === 200) {
      open++;
      controllers.push(controller);
      // Read as a browser would, so the server's writes never back up.
      void response.body.pipeTo(new WritableStream()).catch(() => undefined);
    } else {
      refused++;
      await response?.body?.cancel();
    }
  }
  return { open, refused, close: () => controllers.forEach((controller) => controller.abort()) };
}
