import { Command } from 'commander';
import { eventId } from '../args.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { CliError, EXIT_FAILED } from '../exit.js';

/**
 * `switchboard replay <id>`: re-POSTs a stored event to a local consumer (DESIGN §7), recorded
 * with `requested_by: "cli"`. A downstream answer of any status is a delivered replay (exit 0);
 * a refused or unreachable target is a failed one (exit 1).
 */

interface ReplayFlags extends ClientFlags {
  to?: string;
  resign: boolean;
  json?: boolean;
}

export function replayCommand(): Command {
  return withClientOptions(
    new Command('replay')
      .description('replay a stored event to your local consumer, re-signed by default')
      .argument('<id>', 'event id', eventId)
      .option('--to <url>', 'target URL (default: replay.default_target in config.json)')
      .option('--no-resign', 'send the stored bytes without a fresh signature (default: replay.resign)')
      .option('--json', 'print the replay result as JSON'),
  ).action(async (id: number, flags: ReplayFlags, command: Command) => {
    const client = await connect(flags);
    const resignGiven = command.getOptionValueSource('resign') === 'cli';
    const replay = await client.call('replayEvent', {
      id,
      ...(flags.to !== undefined ? { target_url: flags.to } : {}),
      ...(resignGiven ? { resign: flags.resign } : {}),
      requested_by: 'cli',
    });
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(replay, null, 2)}\n`);
    } else if (replay.delivered) {
      process.stdout.write(`→ ${replay.target_url}  ${replay.response_status}  ${replay.response_ms} ms  (${replay.resigned ? 're-signed' : 'not re-signed'})\n`);
      if (replay.response_body) process.stdout.write(`${replay.response_body_encoding === 'base64' ? '(binary body, base64) ' : ''}${replay.response_body.slice(0, 2000)}\n`);
    }
    if (replay.warning && !flags.json) process.stderr.write(`warning: ${replay.warning}\n`);
    if (!replay.delivered) throw new CliError(`replay of #${id} to ${replay.target_url} failed: ${replay.error ?? 'not delivered'}`, EXIT_FAILED);
  });
}
