import { Command } from 'commander';
import { EVENTS_PAGE_MAX, indexingNote } from '../../shared/api.js';
import type { EventSummary } from '../../shared/events.js';
import { connect, withClientOptions, type ClientFlags, type ControlClient } from '../client.js';
import { bytes, localTime } from '../format.js';
import { terminalSafe } from '../terminal-safe.js';
import { positiveInt } from '../args.js';
import { CliError, EXIT_FAILED } from '../exit.js';
import { filtersOf, withFilterOptions, type FilterFlags } from '../filters.js';

/**
 * `switchboard events`: the latest events, oldest first (like a log's tail); `--follow` keeps
 * printing new ones. The live stream (`/api/live`, what the UI listens to) is only a doorbell:
 * each ring re-asks `listEvents` with the same filters for what is newer than the last line
 * printed, so the filters mean exactly what they mean in the UI and the API.
 */

interface EventsFlags extends ClientFlags, FilterFlags {
  follow?: boolean;
  limit: number;
  json?: boolean;
  drift?: boolean;
}

export function eventsCommand(): Command {
  return withClientOptions(
    withFilterOptions(
      new Command('events')
        .description('list the latest events; --follow keeps printing new ones')
        .option('-f, --follow', 'keep printing new events as they arrive (Ctrl-C to stop)'),
    )
      .option('-n, --limit <n>', `how many of the latest to print first (1–${EVENTS_PAGE_MAX})`, positiveInt('--limit', EVENTS_PAGE_MAX), 20)
      .option('--drift', "only events that differ from their type's shape (switchboard types)")
      .option('--json', 'one JSON object (an event summary) per line'),
  ).action(async (flags: EventsFlags) => {
    const client = await connect(flags);
    const print = printer(flags.json === true);
    if (!flags.follow) {
      print((await latest(client, flags)).reverse(), true);
      return;
    }
    await follow(client, flags, print);
  });
}

/**
 * The newest `--limit` matching events. A search that runs out of time answers a short page with
 * how far back it read (`searched_back_to`); this goes on from there until the page is full or
 * every event was searched, saying how far it got on a terminal.
 */
async function latest(client: ControlClient, flags: EventsFlags): Promise<EventSummary[]> {
  const events: EventSummary[] = [];
  let cursor: string | undefined;
  let progress = false;
  for (;;) {
    const page = await client.call('listEvents', { ...filtersOf(flags), ...(flags.drift ? { drift: true } : {}), limit: flags.limit - events.length, ...(cursor ? { cursor } : {}) });
    events.push(...page.events);
    if (!page.searched_back_to || !page.next_cursor || events.length >= flags.limit) break;
    if (process.stderr.isTTY) {
      const indexing = page.index_progress ? ` (${indexingNote(page.index_progress)})` : '';
      process.stderr.write(`\rsearching… back to ${localTime(page.searched_back_to)}${indexing}\x1b[K`);
      progress = true;
    }
    cursor = page.next_cursor;
  }
  if (progress) process.stderr.write('\r\x1b[K');
  return events;
}

/** Leeway for the clocks of the CLI and the switchboard (both on this machine) in follow's pulls. */
const CLOCK_LEEWAY_MS = 5_000;

const HEADER = ['ID', 'TIME', 'PROVIDER', 'TYPE', 'TRUST', 'SIZE'];
/**
 * The narrowest each column gets, so followed rows keep their columns as ids grow past the first
 * page's (#9 → #10 → #100000) and as types get longer: room for an id of 7 digits, a date and a
 * time, and typical provider names and types. A followed cell wider than its column is cut with
 * `…` (the id never is, and `show` has the whole type).
 */
const MIN_WIDTHS = [8, 8, 10, 28, 14, 0];
const ID_COLUMN = 0;

function row(event: EventSummary): string[] {
  const trust = `${event.trust_mode}${event.origin === 'test' ? ' TEST' : event.origin === 'import' ? ' imported' : ''}${event.drift ? ' DRIFT' : ''}`;
  return [`#${event.id}`, localTime(event.received_at), terminalSafe(event.provider), terminalSafe(event.event_type ?? '-'), trust, bytes(event.payload_size)].map(terminalSafe);
}

function fit(cell: string, width: number, column: number, last: boolean): string {
  if (last) return cell;
  if (cell.length > width && column !== ID_COLUMN) return `${cell.slice(0, width - 1)}…`;
  return cell.padEnd(width);
}

/** Prints events oldest first: a table for people, one JSON summary per line for programs. */
function printer(json: boolean): (events: EventSummary[], first: boolean) => void {
  let widths: number[] = HEADER.map((cell, column) => Math.max(cell.length, MIN_WIDTHS[column]!));
  let headerOut = false;
  const line = (cells: string[]) => `${cells.map((cell, column) => fit(cell, widths[column]!, column, column === cells.length - 1)).join('  ')}`.trimEnd();
  return (events, first) => {
    if (json) {
      process.stdout.write(events.map((event) => `${JSON.stringify(event)}\n`).join(''));
      return;
    }
    const rows = events.map(row);
    if (first) {
      if (events.length === 0) process.stderr.write('no events yet\n');
      // The first page widens the columns it needs; later (followed) rows keep them.
      widths = widths.map((width, column) => Math.max(width, ...rows.map((cells) => cells[column]!.length)));
    }
    if (rows.length === 0) return;
    if (!headerOut) process.stdout.write(`${line(HEADER)}\n`);
    headerOut = true;
    process.stdout.write(rows.map((cells) => `${line(cells)}\n`).join(''));
  };
}

async function follow(client: ControlClient, flags: EventsFlags, print: (events: EventSummary[], first: boolean) => void): Promise<void> {
  let lastId = 0;
  /** When the last listing began: every event it did not see was received after that. */
  let listedAt = 0;
  let pulling = false;
  let again = false;
  let failed: unknown;
  let ready = false;

  /** Everything newer than the last printed event that matches the filters, oldest first. */
  const pull = async () => {
    if (pulling) {
      again = true;
      return;
    }
    pulling = true;
    try {
      do {
        again = false;
        const fresh: EventSummary[] = [];
        let cursor: string | undefined;
        const floor = new Date(listedAt - CLOCK_LEEWAY_MS).toISOString();
        listedAt = Date.now();
        pages: for (;;) {
          const page = await client.call('listEvents', { ...filtersOf(flags), ...(flags.drift ? { drift: true } : {}), limit: EVENTS_PAGE_MAX, ...(cursor ? { cursor } : {}) });
          for (const event of page.events) {
            if (event.id <= lastId) break pages;
            fresh.push(event);
          }
          if (!page.next_cursor) break;
          // A search that ran out of time past what the last listing saw has nothing newer to find.
          if (page.searched_back_to && page.searched_back_to < floor) break;
          cursor = page.next_cursor;
        }
        if (fresh.length > 0) {
          lastId = Math.max(lastId, ...fresh.map((event) => event.id));
          print(fresh.reverse(), false);
        }
      } while (again);
    } catch (error) {
      failed = error;
      controller.abort();
    } finally {
      pulling = false;
    }
  };

  const controller = new AbortController();
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    controller.abort();
  });
  // Open the stream before reading the first page, so nothing lands between the two unseen.
  const live = await client.live((message) => {
    // Rings before the first page is printed are covered by the pull right after it.
    if (message.type === 'event' && ready) void pull();
  }, controller.signal);
  // Handled from now on: the stream may end while the first page is still being read.
  live.done.catch(() => undefined);
  listedAt = Date.now();
  const first = await latest(client, flags);
  lastId = Math.max(0, ...first.map((event) => event.id));
  print(first.reverse(), true);
  ready = true;
  process.stderr.write(`following new events on ${client.where} (Ctrl-C to stop)\n`);
  void pull();
  // However the stream ends (the instance stopped, was killed, the connection dropped): one line.
  await live.done.catch(() => undefined);
  if (failed instanceof CliError && !/stopped|answering/.test(failed.message)) throw failed;
  if (!interrupted) throw new CliError(`the switchboard on ${client.where} stopped: no more events to follow`, EXIT_FAILED);
}
