import { Command, Option } from 'commander';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { usageError } from '../exit.js';
import { localTime, table } from '../format.js';
import { terminalSafeBlock } from '../terminal-safe.js';

/**
 * `switchboard types` (DESIGN §16): the shapes switchboard inferred from stored events.
 * - `types` lists every type with a shape;
 * - `types <provider> <event_type>` prints the TypeScript declarations (`--zod`: the zod schema,
 *   `--json-schema`: the JSON Schema, `--fields`: the fields with presence and types, `--json`:
 *   the API's describeEventType answer);
 * - `types <provider> [event_type] --reset` forgets shapes: they are inferred again from the next events.
 *
 * Paths, types and examples come from payloads: their control characters are printed escaped
 * (`\x1b`), except with --json.
 */

interface TypesFlags extends ClientFlags {
  zod?: boolean;
  jsonSchema?: boolean;
  fields?: boolean;
  json?: boolean;
  reset?: boolean;
}

export function typesCommand(): Command {
  return withClientOptions(
    new Command('types')
      .description('the shape of each event type, inferred from stored events: TypeScript, zod or JSON Schema for your handler')
      .argument('[provider]', 'a provider name')
      .argument('[event_type]', 'an event type, e.g. push')
      .addOption(new Option('--zod', 'print the zod schema (exports <Root>Schema)').conflicts(['jsonSchema', 'fields']))
      .addOption(new Option('--json-schema', 'print the JSON Schema').conflicts(['fields']))
      .option('--fields', 'print the fields: presence, types, example')
      .option('--json', 'print the API answer as JSON')
      .option('--reset', "forget the type's shape (every type of the provider without event_type)"),
  ).action(async (provider: string | undefined, eventType: string | undefined, flags: TypesFlags) => {
    const client = await connect(flags);
    if (flags.reset) {
      if (provider === undefined) throw usageError('--reset needs a provider (and optionally an event type)');
      const { reset } = await client.call('resetEventType', { provider, ...(eventType !== undefined ? { event_type: eventType } : {}) });
      process.stdout.write(`forgot ${reset} shape${reset === 1 ? '' : 's'}: ${terminalSafeBlock(provider)}${eventType ? ` ${terminalSafeBlock(eventType)}` : ''} is inferred again from the next events\n`);
      return;
    }
    if (eventType === undefined) {
      const { types } = await client.call('listEventTypes', provider !== undefined ? { provider } : {});
      if (flags.json) return void process.stdout.write(`${JSON.stringify(types, null, 2)}\n`);
      if (types.length === 0) return void process.stderr.write('no shapes yet: they are inferred from stored JSON events, a moment after they arrive\n');
      process.stdout.write(
        table(
          ['PROVIDER', 'TYPE', 'EVENTS', 'FIELDS', 'DRIFT', 'LAST SEEN'],
          types.map((type) => [
            terminalSafeBlock(type.provider),
            terminalSafeBlock(type.event_type),
            String(type.events_seen),
            `${type.field_count}${type.paths_truncated ? '+' : ''}`,
            type.drift_events > 0 ? `${type.drift_events} (last ${localTime(type.last_drift_at!)})` : '-',
            type.last_seen ? localTime(type.last_seen) : '-',
          ]),
        ),
      );
      return;
    }
    if (provider === undefined) throw usageError('give a provider and an event type, e.g. switchboard types github push');
    const shape = await client.call('describeEventType', { provider, event_type: eventType });
    if (flags.json) return void process.stdout.write(`${JSON.stringify(shape, null, 2)}\n`);
    if (flags.zod) return void process.stdout.write(shape.types.zod);
    if (flags.jsonSchema) return void process.stdout.write(`${JSON.stringify(shape.types.json_schema, null, 2)}\n`);
    if (flags.fields) {
      process.stdout.write(
        table(
          ['PATH', 'PRESENCE', 'TYPES', 'EXAMPLE'],
          shape.fields.map((field) => [terminalSafeBlock(field.path), `${Math.round(field.presence * 1000) / 10} %`, field.types.join(' | '), terminalSafeBlock(field.example ?? '')]),
        ),
      );
      if (shape.fields_truncated) process.stderr.write('… more fields: --json lists up to 2,000\n');
      return;
    }
    process.stdout.write(terminalSafeBlock(shape.types.typescript));
  });
}
