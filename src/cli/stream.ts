import { styleText } from 'node:util';
import type { AnsweredAttempt, EventBus } from '../core/bus.js';
import type { ReplayRecord } from '../core/store/types.js';
import type { Services } from '../core/services.js';
import type { EventSummary, Rejection } from '../shared/events.js';
import { clockTime, TRUST_STYLE, type Style } from './format.js';
import { terminalSafe as safe } from './terminal-safe.js';

/**
 * The terminal stream of `switchboard serve` (DESIGN §13): one line per accepted delivery,
 * duplicate, rejection and replay/forward result, as text or as one JSON object per line.
 *
 * Ordering and cost: a bus listener runs inside the ingest path (the bus announces an event
 * before the receiver answers), and stdout is a blocking file descriptor on Linux when it is a
 * pipe or a terminal, so a slow reader would stall the receiver. So a listener only appends
 * the record to a bounded backlog, or counts it once the backlog is full; a timer formats and
 * writes at most STREAM_LINES_PER_TICK lines of it in one write every STREAM_TICK_MS. So a
 * short burst (a test run's 10 events and their forwards) prints whole, a little later; only a
 * real burst — more than STREAM_BACKLOG records waiting, a second's worth of lines — is
 * coalesced into one "… 2,431 more in the last second" line per second (JSON:
 * `{"type":"skipped","count":2431}`). Every record is still in the database, the UI and
 * `switchboard events`.
 */

export const STREAM_TICK_MS = 100;
export const STREAM_LINES_PER_TICK = 10;
/** Lines waiting to be printed before coalescing starts: one second at the printing rate. */
export const STREAM_BACKLOG = STREAM_LINES_PER_TICK * 10;
export const STREAM_SKIPPED_WINDOW_MS = 1000;

export type LogFormat = 'text' | 'json';

type Entry =
  | { type: 'event'; record: EventSummary }
  | { type: 'duplicate'; record: EventSummary }
  | { type: 'rejection'; record: Rejection }
  | { type: 'replay'; record: ReplayRecord }
  | { type: 'answered'; record: AnsweredAttempt };

export interface StreamOptions {
  format: LogFormat;
  color: boolean;
  write: (chunk: string) => void;
  now?: () => number;
}

export interface TerminalStream {
  close(): void;
}

export function startTerminalStream(bus: EventBus, options: StreamOptions): TerminalStream {
  const now = options.now ?? Date.now;
  const render = options.format === 'json' ? jsonLine : textLine(options.color);
  let buffer: Entry[] = [];
  let skipped = 0;
  let skippedSince = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const tick = () => {
    timer = undefined;
    let chunk = '';
    const lines = buffer.length <= STREAM_LINES_PER_TICK ? buffer : buffer.slice(0, STREAM_LINES_PER_TICK);
    for (const entry of lines) chunk += `${render(entry)}\n`;
    buffer = lines === buffer ? [] : buffer.slice(STREAM_LINES_PER_TICK);
    if (skipped > 0 && now() - skippedSince >= STREAM_SKIPPED_WINDOW_MS) {
      chunk += `${options.format === 'json' ? JSON.stringify({ type: 'skipped', time: new Date(now()).toISOString(), count: skipped }) : skippedLine(skipped, options.color)}\n`;
      skipped = 0;
    }
    if (chunk !== '') options.write(chunk);
    if ((skipped > 0 || buffer.length > 0) && !closed) arm();
  };
  const arm = () => {
    timer = setTimeout(tick, STREAM_TICK_MS);
    timer.unref();
  };
  const push = (entry: Entry) => {
    if (buffer.length < STREAM_BACKLOG) buffer.push(entry);
    else if (skipped++ === 0) skippedSince = now();
    if (timer === undefined) arm();
  };

  const onEvent = (record: EventSummary) => push({ type: 'event', record });
  const onDuplicate = (record: EventSummary) => push({ type: 'duplicate', record });
  const onRejection = (record: Rejection) => push({ type: 'rejection', record });
  const onReplay = (record: ReplayRecord) => push({ type: 'replay', record });
  const onAnswered = (record: AnsweredAttempt) => push({ type: 'answered', record });
  bus.on('event', onEvent);
  bus.on('answered', onAnswered);
  bus.on('duplicate', onDuplicate);
  bus.on('rejection', onRejection);
  bus.on('replay', onReplay);
  return {
    close() {
      if (closed) return;
      closed = true;
      bus.off('event', onEvent);
      bus.off('duplicate', onDuplicate);
      bus.off('rejection', onRejection);
      bus.off('replay', onReplay);
      bus.off('answered', onAnswered);
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// JSON lines: the field names are a contract (docs/cli.md).

function jsonLine(entry: Entry): string {
  switch (entry.type) {
    case 'event':
    case 'duplicate': {
      const event = entry.record;
      return JSON.stringify({
        type: entry.type,
        time: event.received_at,
        id: event.id,
        provider: event.provider,
        event_type: event.event_type,
        external_id: event.external_id,
        trust_mode: event.trust_mode,
        verified: event.verified,
        origin: event.origin,
        payload_size: event.payload_size,
      });
    }
    case 'rejection': {
      const rejection = entry.record;
      return JSON.stringify({
        type: 'rejection',
        time: rejection.received_at,
        id: rejection.id,
        provider: rejection.provider,
        reason: rejection.reason,
        hint: rejection.hint,
        body_size: rejection.body_size,
        source_ip: rejection.source_ip,
      });
    }
    case 'replay': {
      const replay = entry.record;
      return JSON.stringify({
        type: 'replay',
        time: replay.created_at,
        id: replay.id,
        event_id: replay.event_id,
        requested_by: replay.requested_by,
        target_url: replay.target_url,
        delivered: replay.delivered,
        status: replay.response_status,
        ms: replay.response_ms,
        resigned: replay.resigned,
        error: replay.error,
        chaos: replay.chaos ?? null,
      });
    }
    case 'answered': {
      const answered = entry.record;
      return JSON.stringify({
        type: 'answered',
        time: answered.at,
        id: answered.event.id,
        provider: answered.event.provider,
        event_type: answered.event.event_type,
        status: answered.status,
        rule: answered.rule,
        attempt: answered.attempt,
        delay_ms: answered.delay_ms,
      });
    }
  }
}

/** The `ready` record that replaces the banner with `--log-format json`. */
export function readyRecord(sb: Pick<Services, 'version' | 'url' | 'options'>): Record<string, unknown> {
  return {
    type: 'ready',
    time: new Date().toISOString(),
    version: sb.version,
    receiver_url: sb.url.receiver,
    control_url: sb.url.control,
    mcp_url: sb.url.mcp,
    ui_url: sb.url.ui,
    data_dir: sb.options.dataDir,
  };
}

// ---------------------------------------------------------------------------------------------
// Text lines: `09:41:07  stripe  checkout.session.completed  #1042  signed`.

const PROVIDER_WIDTH = 10;
const TYPE_WIDTH = 28;
const HINT_MAX = 90;

function textLine(color: boolean): (entry: Entry) => string {
  const paint = (style: Style, text: string) => (color ? styleText(style, text, { validateStream: false }) : text);
  return (entry) => {
    switch (entry.type) {
      case 'event':
      case 'duplicate': {
        const event = entry.record;
        const head = `${paint('dim', clockTime(event.received_at))}  ${safe(event.provider).padEnd(PROVIDER_WIDTH)}  ${safe(event.event_type ?? '-').padEnd(TYPE_WIDTH)}  #${event.id}`;
        const test = event.origin === 'test' ? `  ${paint(['bold', 'magenta'], 'TEST')}` : '';
        if (entry.type === 'duplicate') {
          return `${head}  ${paint('dim', `duplicate${event.external_id ? ` of ${safe(event.external_id)}` : ''}, already stored`)}${test}`;
        }
        return `${head}  ${paint(TRUST_STYLE[event.trust_mode], event.trust_mode)}${test}`;
      }
      case 'rejection': {
        const rejection = entry.record;
        const hint = rejection.hint ? ` — ${safe(shortHint(rejection.hint))}` : '';
        return `${paint('dim', clockTime(rejection.received_at))}  ${safe(rejection.provider).padEnd(PROVIDER_WIDTH)}  ${paint('red', `rejected ${safe(rejection.reason)}`)}${hint}`;
      }
      case 'replay': {
        const replay = entry.record;
        const outcome = replay.delivered
          ? `${paint(replay.response_status !== null && replay.response_status < 400 ? 'green' : 'red', String(replay.response_status))}  ${replay.response_ms ?? '?'} ms`
          : paint('red', `failed: ${safe(replay.error ?? 'not delivered')}`);
        const who = replay.requested_by === 'forward' ? '' : `, replay by ${replay.requested_by}`;
        const chaos = replay.chaos ? `, ${replay.chaos}` : '';
        return `${paint('dim', clockTime(replay.created_at))}  → ${safe(replay.target_url)}  ${outcome}  ${paint('dim', `#${replay.event_id}${who}${chaos}`)}`;
      }
      case 'answered': {
        // `answered 503 by rule 1, attempt 2` (DESIGN §15): what the provider was told, and why.
        const { event, status, rule, attempt, delay_ms } = entry.record;
        const head = `${paint('dim', clockTime(entry.record.at))}  ${safe(event.provider).padEnd(PROVIDER_WIDTH)}  ${safe(event.event_type ?? '-').padEnd(TYPE_WIDTH)}  #${event.id}`;
        const delay = delay_ms > 0 ? ` after ${delay_ms} ms` : '';
        return `${head}  ${paint(status < 300 ? 'green' : 'yellow', `answered ${status} by rule ${rule ?? '-'}, attempt ${attempt}${delay}`)}`;
      }
    }
  };
}

function skippedLine(count: number, color: boolean): string {
  const text = `… ${count.toLocaleString('en-US')} more in the last second`;
  return color ? styleText('dim', text, { validateStream: false }) : text;
}

/** The first clause of a rejection's hint: the full diagnosis is in the UI and `list_rejections`. */
export function shortHint(hint: string): string {
  const clause = hint.split(/: |; | \(/)[0]!;
  return clause.length > HINT_MAX ? `${clause.slice(0, HINT_MAX - 1)}…` : clause;
}
