import { createHash } from 'node:crypto';
import { ImportedEventSchema } from '../../shared/export.js';
import { parseTime } from '../../shared/time.js';
import type { ApiOutput } from '../../shared/api.js';
import type { TrustMode } from '../../shared/events.js';
import { formatPath } from '../config.js';
import { sanitizeHeaders } from '../redact.js';
import type { EventStore } from '../store/event-store.js';
import { MAX_EXTERNAL_ID_CHARS, storableText } from '../store/storable.js';
import type { ImportedEvent } from '../store/types.js';

/**
 * `switchboard import` (DESIGN §12): NDJSON lines as export writes them → events with origin
 * "import", received_at kept. A line is stored whole or not at all: one that does not parse,
 * fails the schema or cannot be stored is reported with its line number and skipped, and the
 * others go on. Headers are sanitized again with this instance's secrets, since a file may
 * come from anywhere.
 *
 * A file's word is not a verification. `verified: true` means this instance checked the
 * signature over the raw bytes; a line can claim anything (a hand-made one claimed "signed,
 * verified" with an invented detail and was shown with the green badge, then re-signed with the
 * real secret on replay). So every imported event is stored `verified: false`, and what the file
 * claimed survives only as words in `verify_detail` (importedVerifyDetail). `trust_mode` is kept
 * (it is how the event was said to arrive, and export → import → export keeps it), but a line
 * whose trust contradicts its family (a queue event "signed") is refused.
 *
 * Dedupe (issue #22.16) compares what is stored: an external id is cut to 512 characters (DESIGN
 * §4) before it is compared, and a line repeating an earlier line of the same file (the same
 * key, or — without an external id — the same provider, time and payload) is a duplicate even
 * when both arrive in one batch. The result says how many were of each kind (`warnings`), and
 * how many imported events are already past `retention.max_age_days` (retention deletes those
 * within a minute: their age counts from `received_at`, which import keeps).
 */

export type ImportResult = ApiOutput<'importEvents'>;

/** Rows per INSERT; the bytes of one batch are bounded by the line size cap times this. */
export const IMPORT_BATCH_ROWS = 200;
/** …and at most this many payload bytes (one batch of big events must fit the journal's bound). */
export const IMPORT_BATCH_BYTES = 16 * 1024 * 1024;
/** At most this many errors are listed (all are counted). */
export const MAX_LISTED_ERRORS = 100;

/** Optional facts the result mentions. */
export interface ImportContext {
  /** `retention.max_age_days` now, and the time (ms) to count it from. */
  maxAgeDays?: () => number;
  now?: () => number;
}

export interface ImportLine {
  /** 1-based line number in the file. */
  line: number;
  /** The line's text, or null when it was over the size cap (and not read). */
  text: string | null;
}

export class Importer {
  private readonly result: ImportResult = { imported: 0, duplicates: 0, errors: [], error_count: 0 };
  private batch: { line: number; event: ImportedEvent; old: boolean }[] = [];
  private batchBytes = 0;
  /** A digest of every line's dedupe key seen in this file (20 bytes each). */
  private readonly seen = new Set<string>();
  private repeated = 0;
  private cutIds = 0;
  private oldImported = 0;

  constructor(
    private readonly store: EventStore,
    private readonly secrets: () => readonly string[],
    private readonly maxLineBytes: number,
    private readonly context: ImportContext = {},
  ) {}

  /** One line; whatever goes wrong with it is reported with its number, never ends the import. */
  async add(line: ImportLine): Promise<void> {
    let event: ImportedEvent | null;
    try {
      event = this.parse(line);
    } catch (error) {
      // Nothing about one line may end the import (a regex's stack on a huge line did: issue #22.8).
      this.fail(line.line, `could not be read: ${(error as Error).message}`);
      return;
    }
    if (event === null) return;
    const key = dedupeKey(event);
    if (this.seen.has(key)) {
      this.repeated++;
      this.result.duplicates++;
      return;
    }
    this.seen.add(key);
    this.batch.push({ line: line.line, event, old: this.isOld(event.received_at) });
    this.batchBytes += event.payload.byteLength;
    if (this.batch.length >= IMPORT_BATCH_ROWS || this.batchBytes >= IMPORT_BATCH_BYTES) await this.flush();
  }

  private parse({ line, text }: ImportLine): ImportedEvent | null {
    if (text === null) return this.fail(line, `the line is over ${this.maxLineBytes} bytes`);
    if (text.trim() === '') return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return this.fail(line, `not JSON: ${(error as Error).message}`);
    }
    const parsed = ImportedEventSchema.safeParse(value);
    if (!parsed.success) {
      return this.fail(line, parsed.error.issues.map((issue) => `${formatPath(issue.path) || 'the line'}: ${issue.message}`).join('; '));
    }
    const { payload_base64, payload_size, origin: _origin, verified, verify_detail: _claimed, received_at, ...fields } = parsed.data;
    if ((fields.family === 'queue') !== (fields.trust_mode === 'queue')) {
      return this.fail(
        line,
        fields.family === 'queue'
          ? `trust_mode: a queue event is trusted as "queue", not "${fields.trust_mode}"`
          : 'trust_mode: "queue" is only for family "queue" (a webhook event is signed, token or open)',
      );
    }
    const time = parseTime(received_at);
    if ('problem' in time) return this.fail(line, `received_at: ${time.problem}`);
    const payload = new Uint8Array(Buffer.from(payload_base64, 'base64'));
    if (payload_size !== undefined && payload_size !== payload.byteLength) {
      return this.fail(line, `payload_size says ${payload_size} bytes but payload_base64 holds ${payload.byteLength}`);
    }
    let externalId = fields.external_id;
    if (externalId !== null && externalId.length > MAX_EXTERNAL_ID_CHARS) {
      externalId = storableText(externalId, MAX_EXTERNAL_ID_CHARS);
      this.cutIds++;
    }
    return {
      ...fields,
      external_id: externalId,
      received_at: time.utc,
      verified: false,
      verify_detail: importedVerifyDetail(fields.trust_mode, verified),
      headers: sanitizeHeaders(fields.headers, this.secrets()),
      payload,
    };
  }

  async finish(): Promise<ImportResult> {
    await this.flush();
    const warnings: string[] = [];
    if (this.repeated > 0) {
      warnings.push(`${this.repeated} line${this.repeated === 1 ? '' : 's'} repeated an earlier line of this file (the same external id, or the same provider, time and payload): counted as duplicates, stored once`);
    }
    if (this.cutIds > 0) {
      warnings.push(
        `${this.cutIds} line${this.cutIds === 1 ? ' has an external_id' : 's have external_ids'} longer than ${MAX_EXTERNAL_ID_CHARS} characters: stored cut to ${MAX_EXTERNAL_ID_CHARS} (DESIGN §4), and compared as stored — ids equal in their first ${MAX_EXTERNAL_ID_CHARS - 1} characters are duplicates`,
      );
    }
    if (this.oldImported > 0) {
      warnings.push(
        `${this.oldImported} imported event${this.oldImported === 1 ? ' is' : 's are'} older than retention.max_age_days (${this.context.maxAgeDays!()} days): retention removes ${this.oldImported === 1 ? 'it' : 'them'} within a minute — raise max_age_days in config.json to keep ${this.oldImported === 1 ? 'it' : 'them'}`,
      );
    }
    return warnings.length > 0 ? { ...this.result, warnings } : this.result;
  }

  private isOld(receivedAt: string): boolean {
    const { maxAgeDays, now } = this.context;
    if (!maxAgeDays) return false;
    return Date.parse(receivedAt) < (now ?? Date.now)() - maxAgeDays() * 86_400_000;
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    if (batch.length === 0) return;
    const stored = (count: number, old: number) => {
      this.result.imported += count;
      this.oldImported += old;
    };
    try {
      const count = await this.store.importEvents(batch.map((item) => item.event));
      // Which lines were the duplicates is not returned: when some were, the old ones stored are at most `count`.
      stored(count, Math.min(count, batch.filter((item) => item.old).length));
      this.result.duplicates += batch.length - count;
    } catch {
      // One row the database refuses must not cost the others: store them one by one.
      for (const item of batch) {
        try {
          const count = await this.store.importEvents([item.event]);
          stored(count, item.old ? count : 0);
          this.result.duplicates += 1 - count;
        } catch (error) {
          this.fail(item.line, `could not be stored: ${(error as Error).message}`);
        }
      }
    }
  }

  private fail(line: number, message: string): null {
    this.result.error_count++;
    if (this.result.errors.length < MAX_LISTED_ERRORS) this.result.errors.push({ line, message });
    return null;
  }
}

/** What makes two lines of one file the same event (the store's dedupe rule), as a short digest. */
function dedupeKey(event: ImportedEvent): string {
  const hash = createHash('sha1').update(event.provider).update('\u0000');
  if (event.external_id !== null) hash.update('id\u0000').update(event.external_id);
  else hash.update('at\u0000').update(event.received_at).update('\u0000').update(event.payload);
  return hash.digest('base64');
}

/** What the file claimed about an imported event, as the UI, MCP and exports show it. */
export function importedVerifyDetail(trustMode: TrustMode, verified: boolean): string {
  return `imported: the file says ${trustMode}, ${verified ? 'verified' : 'not verified'} — not verified by this instance`;
}

/**
 * Splits a byte stream into lines (\n or \r\n) without holding more than one line; a line over
 * `maxLineBytes` is skipped up to its newline and reported as null text.
 */
export async function* ndjsonLines(chunks: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, maxLineBytes: number): AsyncGenerator<ImportLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;
  const emit = (): ImportLine => {
    line++;
    const bytes = Buffer.concat(parts);
    parts = [];
    size = 0;
    const result = { line, text: tooLong ? null : bytes.toString('utf8').replace(/\r$/, '') };
    tooLong = false;
    return result;
  };
  for await (const raw of chunks) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a)) {
      const piece = chunk.subarray(0, newline);
      if (!tooLong && size + piece.length <= maxLineBytes) parts.push(piece);
      else tooLong = true;
      yield emit();
      chunk = chunk.subarray(newline + 1);
    }
    if (chunk.length > 0) {
      if (!tooLong && size + chunk.length <= maxLineBytes) {
        // Copy: the chunk's buffer may be reused by the stream.
        parts.push(Buffer.from(chunk));
        size += chunk.length;
      } else {
        parts = [];
        size = 0;
        tooLong = true;
      }
    }
  }
  if (size > 0 || tooLong) yield emit();
}
