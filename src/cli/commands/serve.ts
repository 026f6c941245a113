import { rm, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { isSwitchboardError } from '../../core/errors.js';
import { consoleLogger, type Logger } from '../../core/logger.js';
import type { Switchboard } from '../../core/switchboard.js';
import { banner } from '../banner.js';
import { CONTROL_URL_FILE, resolveDataDir } from '../data-dir.js';
import { usageError } from '../exit.js';
import { terminalSafeBlock } from '../terminal-safe.js';
import { writePrivateFile } from '../../core/private-files.js';
import { readyRecord, startTerminalStream, type LogFormat } from '../stream.js';

/**
 * `switchboard serve`: the headless face of the core. Every expected failure (port in use,
 * bad config, unreachable database, unwritable data dir) ends as one line naming the problem
 * and the fix, exit code 2. Once running it prints one line per delivery, duplicate, rejection
 * and replay (stream.ts) unless `--quiet`.
 */

interface ServeFlags {
  dataDir?: string;
  config?: string;
  port?: string;
  controlPort?: string;
  databaseUrl?: string;
  quiet?: boolean;
  logFormat: LogFormat;
}

function portArg(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError(`${flag} must be a port number from 0 to 65535, got "${value}"`);
  return port;
}

export function serveCommand(): Command {
  return new Command('serve')
    .description('run switchboard headless: receiver, web UI, API and MCP (the default command)')
    .option('--data-dir <dir>', 'where events, config.json and control-token live ($SWITCHBOARD_HOME or ~/.switchboard)')
    .option('--config <file>', 'config file (default <data dir>/config.json)')
    .option('--port <n>', 'receiver port, the one to tunnel (default 7777)')
    .option('--control-port <n>', 'control port: web UI, API, MCP; loopback only, never tunnel it (default 7778)')
    .option('--database-url <url>', 'use a PostgreSQL server instead of the embedded database')
    .option('-q, --quiet', 'print the banner, warnings and errors only (no line per delivery)')
    .addOption(new Option('--log-format <format>', 'text, or json: one JSON object per line (docs/cli.md)').choices(['text', 'json']).default('text'))
    .action((flags: ServeFlags) => serve(flags));
}

async function serve(flags: ServeFlags): Promise<void> {
  const receiverPort = portArg(flags.port, '--port');
  const controlPort = portArg(flags.controlPort, '--control-port');
  const dataDir = resolveDataDir(flags.dataDir);
  const json = flags.logFormat === 'json';
  // Loaded here, not at the top: the client verbs start without the core (and its database).
  const { createSwitchboard } = await import('../../core/switchboard.js');
  const switchboard = createSwitchboard({
    dataDir,
    configPath: flags.config ? resolve(flags.config) : undefined,
    env: process.env,
    token: process.env.SWITCHBOARD_TOKEN || undefined,
    receiverPort,
    controlPort,
    databaseUrl: flags.databaseUrl,
    // The receiver's thread parses and verifies while the database commits on the other core.
    databaseInWorker: true,
    // Diagnostic only (docs/benchmarks.md): store before answering, without the journal.
    journal: process.env.SWITCHBOARD_JOURNAL === 'off' ? false : undefined,
    logger: serveLogger(json, flags.quiet === true),
  });

  // Listening from before the ports open: a provider retrying against a fixed port may deliver
  // the moment they do. Lines wait until the banner is out, so it still comes first.
  let bannerOut = false;
  const early: string[] = [];
  const stream = flags.quiet
    ? undefined
    : startTerminalStream(switchboard.bus, {
        format: flags.logFormat,
        color: !json && colorWanted(process.stdout),
        write: (chunk) => (bannerOut ? process.stdout.write(chunk) : early.push(chunk)),
      });
  try {
    await switchboard.start();
  } catch (error) {
    stream?.close();
    if (isSwitchboardError(error)) throw usageError(error.message, error.hint, error);
    // Not a failure switchboard knows how to explain: still one line, never a bare stack trace.
    throw usageError(`could not start: ${(error as Error).message}`, 'this is a bug in switchboard: please report it with this line (SWITCHBOARD_DEBUG=1 prints the stack trace)', error);
  }
  // Before anything is announced: a SIGTERM right after the banner must still stop cleanly.
  const recorded = recordControlUrl(dataDir, switchboard);
  handleSignals(switchboard, async () => {
    stream?.close();
    await recorded;
    return forgetControlUrl(dataDir, switchboard);
  });
  // The client verbs may be run the moment the banner is out: the file is there by then.
  await recorded;
  process.stdout.write(json ? `${JSON.stringify(readyRecord(switchboard))}\n` : banner(switchboard));
  bannerOut = true;
  for (const chunk of early.splice(0)) process.stdout.write(chunk);
  // A closed stdout (the reader went away) must not take the receiver down with it.
  process.stdout.on('error', () => stream?.close());
}

/** Colour only for a terminal that wants it (https://no-color.org, FORCE_COLOR). */
function colorWanted(stream: NodeJS.WriteStream): boolean {
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0') return true;
  if (process.env.NO_COLOR) return false;
  return stream.isTTY === true && stream.hasColors();
}

function serveLogger(json: boolean, quiet: boolean): Logger {
  const write = (line: string) => process.stderr.write(`${line}\n`);
  if (!json) {
    // Warnings may quote what came from outside (a handler's answer, a header): terminal-safe.
    const safeWrite = (line: string) => write(terminalSafeBlock(line));
    const text = consoleLogger(safeWrite);
    return quiet ? { ...text, info() {} } : text;
  }
  const log = (level: string) => (message: string) => write(JSON.stringify({ type: 'log', time: new Date().toISOString(), level, message }));
  return { info: quiet ? () => {} : log('info'), warn: log('warn'), error: log('error') };
}

/** The client verbs find this instance through it even when it listens on a port of its own choosing. */
async function recordControlUrl(dataDir: string, switchboard: Switchboard): Promise<void> {
  // Never through a symbolic link planted at control-url (issue #22.4).
  await writePrivateFile(join(dataDir, CONTROL_URL_FILE), `${switchboard.url.control}\n`).catch((error: Error) =>
    switchboard.logger.warn(`could not write ${CONTROL_URL_FILE}: ${error.message} (client verbs need --control-url)`),
  );
}

async function forgetControlUrl(dataDir: string, switchboard: Switchboard): Promise<void> {
  const path = join(dataDir, CONTROL_URL_FILE);
  // Only our own: another instance (on another data dir copy) may have written it since.
  const recorded = await readFile(path, 'utf8').catch(() => '');
  if (recorded.trim() === switchboard.url.control) await rm(path, { force: true });
}

function handleSignals(switchboard: Switchboard, beforeStop: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`switchboard: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    process.stderr.write(`switchboard: ${signal}, finishing in-flight deliveries…\n`);
    beforeStop()
      .catch(() => undefined)
      .then(() => switchboard.stop())
      .then(() => process.exit(0))
      .catch((error: Error) => {
        process.stderr.write(`switchboard: shutdown failed: ${error.message}\n`);
        process.exit(1);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
