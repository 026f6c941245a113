import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isSwitchboardError } from '../core/errors.js';
import { switchboardVersion } from '../core/paths.js';
import { usePrivateUmask } from '../core/private-files.js';
import { createSwitchboard, type Switchboard } from '../core/switchboard.js';
import { banner } from './banner.js';

/**
 * `switchboard serve`: the headless face of the core. Every expected failure (port in use,
 * bad config, unreachable database, unwritable data dir) ends as one line naming the problem
 * and the fix, exit code 2.
 */

const USAGE = `usage: switchboard serve [--data-dir DIR] [--config FILE] [--port N] [--control-port N] [--database-url URL]

  --data-dir DIR       where events, config.json and control-token live ($SWITCHBOARD_HOME or ~/.switchboard)
  --config FILE        config file (default <data dir>/config.json)
  --port N             receiver port, the one to tunnel (default 7777)
  --control-port N     control port: web UI, API, MCP; loopback only, never tunnel it (default 7778)
  --database-url URL   use a PostgreSQL server instead of the embedded database`;

export const EXIT_USAGE = 2;

function fail(message: string, hint?: string): never {
  process.stderr.write(`switchboard: ${message}${hint ? `\n  fix: ${hint}` : ''}\n`);
  process.exit(EXIT_USAGE);
}

function portArg(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) fail(`${flag} must be a port number from 0 to 65535, got "${value}"`);
  return port;
}

export async function main(argv: string[]): Promise<void> {
  // Whatever this process writes (database, token, config, exports) is for this account only.
  usePrivateUmask();
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        config: { type: 'string' },
        port: { type: 'string' },
        'control-port': { type: 'string' },
        'database-url': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    fail((error as Error).message, USAGE);
  }
  const { values, positionals } = parsed;
  if (values.version) {
    process.stdout.write(`${switchboardVersion()}\n`);
    return;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const command = positionals[0] ?? 'serve';
  if (command !== 'serve' || positionals.length > 1) fail(`unknown command "${positionals.join(' ')}"`, USAGE);

  const dataDir = resolve(values['data-dir'] ?? process.env.SWITCHBOARD_HOME ?? join(homedir(), '.switchboard'));
  const switchboard = createSwitchboard({
    dataDir,
    configPath: values.config ? resolve(values.config) : undefined,
    env: process.env,
    token: process.env.SWITCHBOARD_TOKEN || undefined,
    receiverPort: portArg(values.port, '--port'),
    controlPort: portArg(values['control-port'], '--control-port'),
    databaseUrl: values['database-url'],
    // The receiver's thread parses and verifies while the database commits on the other core.
    databaseInWorker: true,
  });

  try {
    await switchboard.start();
  } catch (error) {
    if (isSwitchboardError(error)) fail(error.message, error.hint);
    throw error;
  }
  process.stdout.write(banner(switchboard));
  handleSignals(switchboard);
}

function handleSignals(switchboard: Switchboard): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`switchboard: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    process.stderr.write(`switchboard: ${signal}, finishing in-flight deliveries…\n`);
    switchboard
      .stop()
      .then(() => process.exit(0))
      .catch((error: Error) => {
        process.stderr.write(`switchboard: shutdown failed: ${error.message}\n`);
        process.exit(1);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
