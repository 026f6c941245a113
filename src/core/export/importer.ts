import { ImportedEventSchema } from '../../shared/export.js';
import type { ApiOutput } from '../../shared/api.js';
import type { TrustMode } from '../../shared/events.js';
import { formatPath } from '../config.js';
import { sanitizeHeaders } from '../redact.js';
import type { EventStore } from '../store/event-store.js';
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
 */

export type ImportResult = ApiOutput<'importEvents'>;

/** Rows per INSERT; the bytes of one batch are bounded by the line size cap times this. */
export const IMPORT_BATCH_ROWS = 200;
/** At most this many errors are listed (all are counted). */
export const MAX_LISTED_ERRORS = 100;

export interface ImportLine {
  /** 1-based line number in the file. */
  line: number;
  /** The line's text, or null when it was over the size cap (and not read). */
  text: string | null;
}

export class Importer {
  private readonly result: ImportResult = { imported: 0, duplicates: 0, errors: [], error_count: 0 };
  private batch: { line: number; event: ImportedEvent }[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly secrets: () => readonly string[],
    private readonly maxLineBytes: number,
  ) {}

  async add({ line, text }: ImportLine): Promise<void> {
    if (text === null) return this.fail(line, `the line is over ${this.maxLineBytes} bytes`);
    if (text.trim() === '') return;
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
    const { payload_base64, payload_size, origin: _origin, verified, verify_detail: _claimed, ...fields } = parsed.data;
    if ((fields.family === 'queue') !== (fields.trust_mode === 'queue')) {
      return this.fail(
        line,
        fields.family === 'queue'
          ? `trust_mode: a queue event is trusted as "queue", not "${fields.trust_mode}"`
          : 'trust_mode: "queue" is only for family "queue" (a webhook event is signed, token or open)',
      );
    }
    const payload = new Uint8Array(Buffer.from(payload_base64, 'base64'));
    if (payload_size !== undefined && payload_size !== payload.byteLength) {
      return this.fail(line, `payload_size says ${payload_size} bytes but payload_base64 holds ${payload.byteLength}`);
    }
    this.batch.push({
      line,
      event: {
        ...fields,
        verified: false,
        verify_detail: importedVerifyDetail(fields.trust_mode, verified),
        headers: sanitizeHeaders(fields.headers, this.secrets()),
        payload,
      },
    });
    if (this.batch.length >= IMPORT_BATCH_ROWS) await this.flush();
  }

  async finish(): Promise<ImportResult> {
    await this.flush();
    return this.result;
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    try {
      const stored = await this.store.importEvents(batch.map((item) => item.event));
      this.result.imported += stored;
      this.result.duplicates += batch.length - stored;
    } catch {
      // One row the database refuses must not cost the others: store them one by one.
      for (const item of batch) {
        try {
          const stored = await this.store.importEvents([item.event]);
          this.result.imported += stored;
          this.result.duplicates += 1 - stored;
        } catch (error) {
          this.fail(item.line, `could not be stored: ${(error as Error).message}`);
        }
      }
    }
  }

  private fail(line: number, message: string): void {
    this.result.error_count++;
    if (this.result.errors.length < MAX_LISTED_ERRORS) this.result.errors.push({ line, message });
  }
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
