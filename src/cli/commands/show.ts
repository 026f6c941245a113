import { Command } from 'commander';
import type { ApiOutput } from '../../shared/api.js';
import type { Replay } from '../../shared/events.js';
import { eventId } from '../args.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { bytes, fullLocalTime, localTime } from '../format.js';
import { terminalSafe as safe, terminalSafeBlock } from '../terminal-safe.js';

/** `switchboard show <id>`: one event with its headers, payload and replay history. */

interface ShowFlags extends ClientFlags {
  json?: boolean;
}

export function showCommand(): Command {
  return withClientOptions(
    new Command('show')
      .description('show one event: trust, headers, payload and replay history')
      .argument('<id>', 'event id (as printed by `switchboard events`)', eventId)
      .option('--json', 'print {event, replays} as JSON (the API getEvent output)'),
  ).action(async (id: number, flags: ShowFlags) => {
    const client = await connect(flags);
    const detail = await client.call('getEvent', { id });
    process.stdout.write(flags.json ? `${JSON.stringify(detail, null, 2)}\n` : showText(detail));
  });
}

function showText({ event, replays }: ApiOutput<'getEvent'>): string {
  const origin = event.origin === 'test' ? '  TEST (made by switchboard, not the provider)' : event.origin === 'import' ? '  imported' : '';
  const lines = [
    `#${event.id}  ${safe(event.provider)}  ${safe(event.event_type ?? '(no type)')}  ${event.trust_mode}${event.verified ? ' (verified)' : ''}${origin}`,
    '',
    `  received     ${fullLocalTime(event.received_at)}${event.source_ip ? ` from ${safe(event.source_ip)}` : ''}`,
    `  external id  ${safe(event.external_id ?? '-')}`,
    `  verified by  ${safe(event.verify_detail ?? '-')}`,
    `  payload      ${bytes(event.payload_size)}${event.content_type ? `, ${safe(event.content_type)}` : ''}${event.payload_encoding === 'base64' ? ' (not UTF-8: shown as base64)' : ''}`,
    '',
    'headers',
  ];
  const names = Object.keys(event.headers).sort();
  const width = Math.max(0, ...names.map((name) => safe(name).length));
  for (const name of names) lines.push(`  ${safe(name).padEnd(width)}  ${safe(event.headers[name] ?? '')}`);
  lines.push('', 'payload', indent(terminalSafeBlock(prettyPayload(event.payload, event.payload_encoding))));
  lines.push('', replays.length === 0 ? 'no replays yet' : 'replays (newest first)');
  for (const replay of replays) lines.push(`  ${replayLine(replay)}`);
  return `${lines.join('\n')}\n`;
}

function prettyPayload(payload: string, encoding: 'utf8' | 'base64'): string {
  if (encoding === 'base64') return payload;
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

const indent = (text: string) => text.replace(/^/gm, '  ');

export function replayLine(replay: Replay): string {
  const outcome = replay.delivered ? `${replay.response_status}  ${replay.response_ms} ms` : `failed: ${replay.error ?? 'not delivered'}`;
  const notes = [
    `by ${replay.requested_by}`,
    replay.resigned ? 're-signed' : 'not re-signed',
    ...(replay.payload_edited ? ['edited payload'] : []),
    ...(replay.headers_overridden.length > 0 ? [`headers set: ${replay.headers_overridden.join(', ')}`] : []),
  ];
  return `${localTime(replay.created_at)}  → ${safe(replay.target_url)}  ${safe(outcome)}  (${safe(notes.join(', '))})${replay.warning ? `\n    warning: ${safe(replay.warning)}` : ''}`;
}
