import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { ApiOutput } from '../../shared/api.js';
import { collectSet } from '../args.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { usageError } from '../exit.js';
import { table } from '../format.js';
import { terminalSafe } from '../terminal-safe.js';

/**
 * `switchboard trigger <provider> [event_type]` (DESIGN §11): the running instance builds a
 * test event from its fixture catalog, signs it with the provider's own secret and scheme, and
 * delivers it through its receiver — the path a real delivery takes. It is stored as TEST.
 */

interface TriggerFlags extends ClientFlags {
  set: Record<string, unknown>;
  payload?: string;
  list?: boolean;
  json?: boolean;
}

export function triggerCommand(): Command {
  return withClientOptions(
    new Command('trigger')
      .description('send a signed test event through the receiver (stored as TEST)')
      .argument('[provider]', 'provider name from config.json')
      .argument('[event_type]', "fixture to send (default: the kind's first; see --list)")
      .option('--set <path=value>', 'override a payload field by dot path; repeat for more', collectSet, {})
      .option('--payload <file>', 'send this file as the whole payload instead of a fixture ("-" for stdin)')
      .option('--list', 'list the event types each provider can send')
      .option('--json', 'print the stored event summary (or the list) as JSON'),
  ).action(async (provider: string | undefined, eventType: string | undefined, flags: TriggerFlags) => {
    if (flags.list) {
      const client = await connect(flags);
      const result = await client.call('listTestEvents', provider !== undefined ? { provider } : {});
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : listText(result));
      return;
    }
    if (provider === undefined) throw usageError('which provider? switchboard trigger <provider> [event_type]', 'switchboard trigger --list shows what each provider can send');
    const payload = flags.payload === undefined ? undefined : await readPayload(flags.payload);
    const client = await connect(flags);
    const { event } = await client.call('sendTestEvent', {
      provider,
      ...(eventType !== undefined ? { event_type: eventType } : {}),
      ...(Object.keys(flags.set).length > 0 ? { overrides: flags.set } : {}),
      ...(payload !== undefined ? { payload } : {}),
    });
    process.stdout.write(flags.json ? `${JSON.stringify(event)}\n` : terminalSafe(`sent #${event.id}  ${event.provider}  ${event.event_type ?? '-'}  ${event.trust_mode}  TEST`) + '\n');
  });
}

async function readPayload(file: string): Promise<string> {
  try {
    return file === '-' ? await new Response(process.stdin as unknown as ReadableStream).text() : await readFile(file, 'utf8');
  } catch (error) {
    throw usageError(`--payload ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function listText({ test_events }: ApiOutput<'listTestEvents'>): string {
  if (test_events.length === 0) return 'no providers that can send test events: add one to config.json\n';
  return table(['PROVIDER', 'KIND', 'EVENT TYPE', 'DESCRIPTION'], test_events.map((info) => [info.provider, info.kind, info.event_type, info.description]));
}
