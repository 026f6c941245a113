import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import type { ApiInput } from '../../shared/api.js';
import { ChaosProfileSchema, parseChaosSpec, type ChaosProfileInput } from '../../shared/delivery-lab.js';
import { collectSet, eventId } from '../args.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { CliError, EXIT_FAILED, usageError } from '../exit.js';
import { terminalSafe as safe, terminalSafeBlock } from '../terminal-safe.js';

/**
 * `switchboard replay <id>`: re-POSTs a stored event to a local consumer (DESIGN §7, §13),
 * recorded with `requested_by: "cli"`. Without `--to` it goes where the UI would send it: the
 * provider's forward target, else the event's last target, else replay.default_target. Edits
 * (`--set`, `--payload`, `--header`) are sent instead of the stored bytes, re-signed over them.
 * A downstream answer of any status is a delivered replay (exit 0, or 1 with
 * `--fail-on-non-2xx`, for scripts); a refused or unreachable target is a failed one (exit 1).
 */

interface ReplayFlags extends ClientFlags {
  to?: string;
  resign: boolean;
  set: Record<string, unknown>;
  payload?: string;
  header: Record<string, string>;
  failOnNon2xx?: boolean;
  chaos?: ChaosProfileInput;
  json?: boolean;
}

/** `--chaos duplicate=0.2,copies=1,after=100,delay=0-500,seed=42` (DESIGN §15). */
function chaosOption(value: string): ChaosProfileInput {
  try {
    const profile = parseChaosSpec(value);
    const checked = ChaosProfileSchema.safeParse(profile);
    if (!checked.success) throw new Error(`--chaos: ${checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
    return profile;
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** `--header 'name: value'` (repeatable); `'name:'` with nothing after it removes the header. */
function collectHeader(value: string, previous: Record<string, string>): Record<string, string> {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (name === '') throw new InvalidArgumentError(`"${value}" is not 'name: value' (e.g. --header 'x-debug: 1')`);
  return { ...previous, [name]: value.slice(colon + 1).trim() };
}

export function replayCommand(): Command {
  return withClientOptions(
    new Command('replay')
      .description('replay a stored event to your local consumer, re-signed by default')
      .argument('<id>', 'event id', eventId)
      .option('--to <url>', "target URL (default: the provider's forward target, else this event's last target, else replay.default_target)")
      .option('--no-resign', 'send the stored bytes without a fresh signature (default: replay.resign)')
      .option('--set <path=value>', 'set a field of the JSON payload by dot path (a form field by name); repeat for more', collectSet, {})
      .option('--payload <file>', 'send this file as the payload instead of the stored one ("-" for stdin)')
      .option('--header <name: value>', "add or override a header ('name:' removes one); repeat for more", collectHeader, {})
      .option('--chaos <spec>', 'duplicates and delay, e.g. duplicate=1,copies=2,after=100,delay=0-500,seed=42', chaosOption)
      .option('--fail-on-non-2xx', 'exit 1 when the consumer answers other than 2xx (for scripts); with --chaos, any copy')
      .option('--json', 'print the replay result as JSON'),
  ).action(async (id: number, flags: ReplayFlags, command: Command) => {
    const payload = flags.payload === undefined ? undefined : await readPayload(flags.payload);
    const client = await connect(flags);
    const resignGiven = command.getOptionValueSource('resign') === 'cli';
    const input: ApiInput<'replayEvent'> = {
      id,
      ...(flags.to !== undefined ? { target_url: flags.to } : {}),
      ...(resignGiven ? { resign: flags.resign } : {}),
      ...(payload !== undefined ? { payload: payload.toString('base64'), payload_encoding: 'base64' as const } : {}),
      ...(Object.keys(flags.header).length > 0 ? { headers: flags.header } : {}),
      ...(Object.keys(flags.set).length > 0 ? { overrides: flags.set } : {}),
      ...(flags.chaos !== undefined ? { chaos: flags.chaos } : {}),
      requested_by: 'cli',
    };
    const replay = await client.call('replayEvent', input);
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(replay, null, 2)}\n`);
    } else if (replay.delivered) {
      process.stdout.write(`→ ${safe(replay.target_url)}  ${replay.response_status}  ${replay.response_ms} ms  (${replay.resigned ? 're-signed' : 'not re-signed'})\n`);
      if (replay.response_body) process.stdout.write(`${replay.response_body_encoding === 'base64' ? '(binary body, base64) ' : ''}${terminalSafeBlock(replay.response_body.slice(0, 2000))}\n`);
    }
    if (!flags.json) {
      for (const copy of replay.copies ?? []) {
        process.stdout.write(`→ ${safe(copy.target_url)}  ${copy.delivered ? copy.response_status : `failed: ${safe(copy.error ?? 'not delivered')}`}  ${copy.response_ms ?? '?'} ms  (${copy.chaos ?? 'copy'})\n`);
      }
      if (replay.idempotency) process.stdout.write(`${replay.idempotency === 'idempotent' ? 'idempotent: every copy got a 2xx' : 'not idempotent: a duplicate got a non-2xx after the first got a 2xx'}\n`);
    }
    if (replay.warning && !flags.json) process.stderr.write(`warning: ${safe(replay.warning)}\n`);
    if (!replay.delivered) throw new CliError(`replay of #${id} to ${replay.target_url} failed: ${replay.error ?? 'not delivered'}`, EXIT_FAILED);

    const statuses = [replay, ...(replay.copies ?? [])].map((sent) => sent.response_status ?? 0);
    const status = statuses.find((answered) => answered < 200 || answered > 299) ?? statuses[0]!;
    if (flags.failOnNon2xx && (status < 200 || status > 299)) {
      throw new CliError(`replay of #${id} to ${replay.target_url} was answered ${status} (--fail-on-non-2xx)`, EXIT_FAILED);
    }
  });
}

/** The bytes of `--payload FILE` (or stdin), exactly: sent as base64 so nothing is re-encoded. */
async function readPayload(file: string): Promise<Buffer> {
  try {
    return file === '-' ? Buffer.from(await new Response(process.stdin as unknown as ReadableStream).arrayBuffer()) : await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw usageError(`--payload ${file}: cannot read it (${why})`);
  }
}
