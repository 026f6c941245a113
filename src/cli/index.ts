import { Command, CommanderError } from 'commander';
import { switchboardVersion } from '../core/paths.js';
import { usePrivateUmask } from '../core/private-files.js';
import { eventsCommand } from './commands/events.js';
import { exportCommand } from './commands/export.js';
import { importCommand } from './commands/import.js';
import { providersCommand } from './commands/providers.js';
import { typesCommand } from './commands/types.js';
import { replayCommand } from './commands/replay.js';
import { serveCommand } from './commands/serve.js';
import { showCommand } from './commands/show.js';
import { suiteCommand } from './commands/suite.js';
import { triggerCommand } from './commands/trigger.js';
import { CliError, EXIT_FAILED, EXIT_USAGE, formatCliError } from './exit.js';

/**
 * `switchboard <verb>`: `serve` runs the core; every other verb is a client of a running
 * instance's control API (client.ts). Exit codes are in exit.ts; docs/cli.md is the reference.
 */

const COMMANDS = [serveCommand, eventsCommand, showCommand, replayCommand, triggerCommand, exportCommand, importCommand, providersCommand, suiteCommand, typesCommand];

/** `switchboard suite run`: a command's name behind its parents' (configure runs after addCommand, so parents are set). */
function commandPath(command: Command): string {
  return command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name();
}

function program(): Command {
  const root = new Command('switchboard')
    .description('a workbench for local webhook development: verify, store, inspect, replay')
    .version(switchboardVersion(), '-v, --version')
    .showSuggestionAfterError();
  for (const make of COMMANDS) root.addCommand(make(), make === serveCommand ? { isDefault: true } : {});
  // Usage errors: one `switchboard: …` line and exit 2, the same as every other failure.
  const configure = (command: Command) => {
    command.exitOverride().configureOutput({
      outputError: (message, write) => write(`switchboard: ${message.replace(/^error: /, '')}`),
    });
    // The full path: a hint of `switchboard run --help` for `suite run` would itself be an unknown command.
    if (command !== root) command.showHelpAfterError(`(see: ${commandPath(command)} --help)`);
    command.commands.forEach(configure);
  };
  configure(root);
  return root;
}

export async function main(argv: string[]): Promise<void> {
  // Whatever this process writes (database, token, config, exports) is for this account only.
  usePrivateUmask();
  try {
    const root = program();
    // `serve` is the default command, so commander would read an unknown verb as serve's argument.
    const verb = argv[0];
    if (verb !== undefined && !verb.startsWith('-') && verb !== 'help' && !root.commands.some((command) => command.name() === verb)) {
      throw new CliError(`unknown command "${verb}" (commands: ${root.commands.map((command) => command.name()).join(', ')}; see switchboard --help)`, EXIT_USAGE);
    }
    await root.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    }
    if (error instanceof CliError) {
      if (process.env.SWITCHBOARD_DEBUG && error.cause) process.stderr.write(`${(error.cause as Error).stack}\n`);
      process.stderr.write(formatCliError(error));
      process.exit(error.exitCode);
    }
    // A failure no command explained: one line (the stack trace on request), never a bare trace.
    if (process.env.SWITCHBOARD_DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
    process.stderr.write(`switchboard: ${(error as Error).message}\n  fix: this is a bug in switchboard: please report it with this line (SWITCHBOARD_DEBUG=1 prints the stack trace)\n`);
    process.exit(EXIT_FAILED);
  }
}
