import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartupPhase } from '../../src/core/startup-phase.js';
import { createSwitchboard } from '../../src/core/switchboard.js';
import { migrationsDir } from '../../src/core/paths.js';
import { migrationVersions } from '../../src/core/store/migrations.js';
import { TEST_TOKEN, memoryLogger } from '../helpers/core.js';

const MIGRATIONS = await migrationVersions(migrationsDir());

// SwitchboardOptions.onStartupPhase, as the desktop uses it (embedded database in its worker
// thread, on disk): each step once, in order, as it begins; the same lines go to the log.

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'switchboard-phases-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

async function startOnce(): Promise<{ phases: StartupPhase[]; logged: string[] }> {
  const phases: StartupPhase[] = [];
  const logger = memoryLogger();
  const sb = createSwitchboard({
    dataDir,
    config: { receiver: { port: 0 }, control: { port: 0 } },
    token: TEST_TOKEN,
    logger,
    rendererDir: null,
    env: {},
    databaseInWorker: true,
    onStartupPhase: (phase) => phases.push(phase),
  });
  try {
    await sb.start();
  } finally {
    await sb.stop();
  }
  return { phases, logged: logger.lines };
}

describe('start-up phases', () => {
  it('on a first start: creating the database, migrating it, starting the servers', async () => {
    const { phases, logged } = await startOnce();
    expect(phases).toEqual([
      { step: 'creating-database', message: `creating the database in ${dataDir} — first start only, this takes a few seconds` },
      { step: 'migrating', message: `migrating the database to the current schema (${MIGRATIONS.join(', ')})` },
      { step: 'starting-servers', message: 'starting the receiver and the control server' },
    ]);
    for (const { message } of phases) expect(logged).toContain(`info ${message}`);
  });

  it('on later starts: opening the database, starting the servers (nothing to migrate)', async () => {
    const { phases } = await startOnce();
    expect(phases.map(({ step }) => step)).toEqual(['opening-database', 'starting-servers']);
    expect(phases[0]!.message).toBe(`opening the database in ${dataDir}`);
  });

  it('names what it connects to without a secret in it', async () => {
    const phases: StartupPhase[] = [];
    const sb = createSwitchboard({ dataDir, databaseUrl: 'postgres://sb:hunter2@127.0.0.1:1/none', config: { receiver: { port: 0 }, control: { port: 0 } }, token: TEST_TOKEN, logger: memoryLogger(), rendererDir: null, env: {}, onStartupPhase: (phase) => phases.push(phase) });
    await expect(sb.start()).rejects.toMatchObject({ code: 'database_unavailable' });
    expect(phases).toEqual([{ step: 'opening-database', message: 'connecting to the PostgreSQL server' }]);
  });
});
