import { Command } from 'commander';
import type { ProviderView } from '../../shared/api.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { table } from '../format.js';
import { terminalSafe } from '../terminal-safe.js';

/** `switchboard providers`: what the running instance receives, and whether each provider can verify. */

interface ProvidersFlags extends ClientFlags {
  json?: boolean;
}

export function providersCommand(): Command {
  return withClientOptions(
    new Command('providers')
      .description('list the configured providers, their status and receive URLs')
      .option('--json', 'print the API listProviders output as JSON'),
  ).action(async (flags: ProvidersFlags) => {
    const client = await connect(flags);
    const result = await client.call('listProviders', {});
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    if (result.providers.length === 0) {
      process.stderr.write('no providers yet: add one to config.json or on the Providers screen of the web UI\n');
      return;
    }
    process.stdout.write(table(['NAME', 'KIND', 'TRUST', 'STATUS', 'SECRET', 'RECEIVES AT'], result.providers.map(row)));
    // A problem's advice is a sentence: under the table, one line each, so the columns stay whole.
    const notes = result.providers.filter(({ status }) => status.enabled && status.last_error).map(({ status }) => `  ${terminalSafe(status.name)}: ${terminalSafe(status.last_error!)}`);
    if (notes.length > 0) process.stdout.write(`\n${notes.join('\n')}\n`);
  });
}

function row({ status, receive_url, public_url }: ProviderView): string[] {
  const state = status.enabled ? status.status + (status.last_error ? ' (see below)' : '') : 'disabled';
  const secret = status.secret_status === 'none-by-design' ? '-' : status.secret_status;
  const where = [receive_url ?? status.channel, public_url].filter(Boolean).join('  ');
  return [status.name, status.kind, status.trust_mode, state, secret, where];
}
