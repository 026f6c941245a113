import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnServe, type Serve } from '../helpers/cli.js';

// `switchboard types` and `events --drift` (DESIGN §13, §16), the real binary against a spawned serve.

let dir: string;
let dataDir: string;
let serve: Serve;
const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);
let drifted = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-types-'));
  dataDir = join(dir, 'data');
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ providers: [{ name: 'homelab', kind: 'open' }] }));
  serve = await spawnServe(['--data-dir', dataDir, '--config', config, '--port', '0', '--control-port', '0', '--database-url', 'memory://', '--quiet']);
  const deliver = async (payload: unknown) => {
    const answer = await fetch(`${serve.receiver}/webhooks/homelab?type=deploy`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-event-type': 'deploy' }, body: JSON.stringify(payload) });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { id: number }).id;
  };
  for (let i = 0; i < 21; i++) await deliver({ type: 'deploy', service: 'api', build: { number: i, ok: true } });
  drifted = await deliver({ type: 'deploy', service: 'api', build: { number: 'x', ok: true }, region: 'eu' });
}, 120_000);

afterAll(async () => {
  if (serve) {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  await rm(dir, { recursive: true, force: true });
});

describe('switchboard types', () => {
  it('lists shapes, prints TypeScript, zod and JSON Schema, lists drifted events, and resets', async () => {
    let listed: { provider: string; event_type: string; events_seen: number }[] = [];
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const run = await cli('types', '--json');
      if (run.code === 0) listed = JSON.parse(run.stdout) as typeof listed;
      if (listed.some((type) => type.events_seen === 22)) break;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const type = listed.find((entry) => entry.events_seen === 22)!;
    expect(type).toMatchObject({ provider: 'homelab' });
    const table = await cli('types');
    expect(table.stdout).toMatch(/PROVIDER\s+TYPE\s+EVENTS/);

    const ts = await cli('types', 'homelab', type.event_type);
    expect(ts.code).toBe(0);
    expect(ts.stdout).toMatch(/export interface Homelab\w* \{/);
    expect(ts.stdout).toMatch(/number: number \| string;|number: string \| number;/);
    const zod = await cli('types', 'homelab', type.event_type, '--zod');
    expect(zod.stdout).toContain("import { z } from 'zod';");
    expect(zod.stdout).toMatch(/export const Homelab\w*Schema = z/);
    const schema = JSON.parse((await cli('types', 'homelab', type.event_type, '--json-schema')).stdout) as { type: string; properties: Record<string, unknown> };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['type', 'service', 'build', 'region']));

    const drift = await cli('events', '--drift', '--json');
    expect(drift.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([drifted]);
    expect((await cli('events')).stdout).toMatch(new RegExp(`#${drifted}.*DRIFT`));

    const reset = await cli('types', 'homelab', type.event_type, '--reset');
    expect(reset.stdout).toMatch(/forgot 1 shape/);
    const gone = await cli('types', 'homelab', type.event_type);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no shape for homelab/);
  }, 120_000);
});
