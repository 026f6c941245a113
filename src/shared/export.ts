import { z } from 'zod';
import { IsoDateTimeSchema } from './input.js';
import { EventDetailSchema, FamilySchema, OriginSchema, TrustModeSchema } from './events.js';

/**
 * The NDJSON export format (DESIGN §12), one event per line: every EventDetail field, the exact
 * stored `received_at` (microseconds), and `payload_base64`, the exact bytes whatever they are
 * (binary, invalid UTF-8). `switchboard import` reads the same lines back.
 */
export const ExportedEventSchema = EventDetailSchema.pick({
  id: true,
  provider: true,
  family: true,
  event_type: true,
  external_id: true,
  origin: true,
  trust_mode: true,
  verified: true,
  payload_size: true,
  received_at: true,
  verify_detail: true,
  content_type: true,
  source_ip: true,
  headers: true,
  payload: true,
  payload_encoding: true,
}).extend({
  payload_base64: z.string().describe('the raw body, base64: exact bytes'),
});
export type ExportedEvent = z.infer<typeof ExportedEventSchema>;

/**
 * Canonical base64 (padded), checked in one pass. Not a regular expression with a repeated group:
 * V8 runs those with a backtracking stack, and a payload over ~3.3 MB threw a RangeError that
 * ended the whole import (issue #22.8); an event of any size up to max_body_bytes must pass.
 */
function isBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const end = text.length - padding;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!ok) return false;
  }
  return true;
}
/** PostgreSQL text (and jsonb) cannot hold NUL: such a line is refused with a reason, not half-stored. */
const text = (what: string) => z.string().refine((value) => !value.includes('\u0000'), { message: `${what} contains a NUL character, which cannot be stored as text` });

/**
 * A line as import accepts it: `id`, `origin`, `payload` and `payload_encoding` may be there (an
 * export writes them) but are not used — the id is this instance's, the origin becomes
 * "import", and the bytes come from `payload_base64`. `verified` and `verify_detail` are read as
 * what the file claims, never believed: an imported event is stored `verified: false` (importer.ts).
 */
export const ImportedEventSchema = z.object({
  provider: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a provider name: lowercase letters, digits, "-" or "_"'),
  family: FamilySchema,
  event_type: text('event_type').nullable().default(null),
  external_id: text('external_id').nullable().default(null),
  origin: OriginSchema.optional(),
  trust_mode: TrustModeSchema,
  verified: z.boolean(),
  payload_size: z.number().int().nonnegative().optional(),
  received_at: IsoDateTimeSchema,
  verify_detail: text('verify_detail').nullable().default(null),
  content_type: text('content_type').nullable().default(null),
  source_ip: text('source_ip').nullable().default(null),
  headers: z.record(text('a header name'), text('a header value')).default({}),
  payload_base64: z.string().refine(isBase64, 'payload_base64 is not valid base64'),
});
export type ImportedEventLine = z.infer<typeof ImportedEventSchema>;
