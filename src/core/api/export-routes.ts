import type { IncomingMessage, ServerResponse } from 'node:http';
import { ExportQuerySchema, type ExportQuery } from '../../shared/api.js';
import { formatPath } from '../config.js';
import { SwitchboardError } from '../errors.js';
import type { Services } from '../services.js';
import { exportLine } from '../export/event-lines.js';
import { HAR_EPILOGUE, harEntry, harPrologue } from '../export/har.js';
import { Importer, ndjsonLines, type ImportResult } from '../export/importer.js';

/**
 * `GET /api/export` and `POST /api/import` (DESIGN §12), mounted under /api on the control port
 * (token, Host and Origin already checked). Export streams oldest first in keyset batches
 * bounded by rows and bytes, and waits for the socket to drain before reading the next batch,
 * so a slow client holds one batch in memory, never the event log. Import reads its body line
 * by line for the same reason.
 */

export const EXPORT_BATCH_ROWS = 500;
export const EXPORT_BATCH_BYTES = 8 * 1024 * 1024;

/** Query string → validated export query; an unknown or malformed parameter is the caller's error. */
export function parseExportQuery(params: URLSearchParams): ExportQuery {
  const raw: Record<string, string> = {};
  for (const [key, value] of params) {
    if (key in raw) throw new SwitchboardError('invalid_argument', `export: ${key} is given twice`);
    raw[key] = value;
  }
  const parsed = ExportQuerySchema.safeParse(raw);
  if (!parsed.success) {
    throw new SwitchboardError('invalid_argument', `export: ${parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join('; ')}`);
  }
  if (Object.values(parsed.data).some((value) => typeof value === 'string' && value.includes('\u0000'))) {
    throw new SwitchboardError('invalid_argument', 'export: a filter contains a NUL character');
  }
  return parsed.data;
}

/**
 * Streams the export. The first batch is read before the status line is sent: a filter the
 * store refuses (a search without three letters in a row, a time it cannot hold) is then a 400
 * with a JSON reason, not a connection cut after a 200 (issue #22.10). A failure later, once
 * bytes are out, can only end the stream.
 */
export async function streamExport(sb: Services, query: ExportQuery, res: ServerResponse): Promise<void> {
  const { format, ...filter } = query;
  const limits = { rows: EXPORT_BATCH_ROWS, bytes: EXPORT_BATCH_BYTES };
  let batch = await sb.store.exportBatch(filter, null, limits);
  const stamp = new Date(sb.now()).toISOString().replace(/[:.]/g, '-');
  res.writeHead(200, {
    'content-type': format === 'har' ? 'application/json; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'content-disposition': `attachment; filename="switchboard-${stamp}.${format}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  const write = async (chunk: string): Promise<boolean> => {
    if (res.destroyed) return false;
    if (!res.write(chunk)) await drainedOrClosed(res);
    return !res.destroyed;
  };
  const receiverUrl = sb.url.receiver;
  if (format === 'har' && !(await write(harPrologue(sb.version)))) return;
  let first = true;
  for (;;) {
    const { events, next } = batch;
    // One write per batch: a string of the batch's lines, released before the next batch is read.
    const chunk = events
      .map((record) => {
        if (format === 'ndjson') return `${exportLine(record)}\n`;
        const entry = `${first ? '' : ','}${JSON.stringify(harEntry(record, receiverUrl))}`;
        first = false;
        return entry;
      })
      .join('');
    if (chunk && !(await write(chunk))) return;
    if (!next) break;
    batch = await sb.store.exportBatch(filter, next, limits);
  }
  if (format === 'har' && !(await write(HAR_EPILOGUE))) return;
  res.end();
}

/** Import a stream of NDJSON (the CLI streams big files here); the answer is the summary. */
export async function importStream(sb: Services, chunks: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): Promise<ImportResult> {
  const maxLineBytes = maxImportLineBytes(sb);
  const importer = new Importer(sb.store, () => sb.providers.allSecrets(), maxLineBytes, {
    maxAgeDays: () => sb.config.retention.max_age_days,
    now: () => sb.now(),
  });
  for await (const line of ndjsonLines(chunks, maxLineBytes)) await importer.add(line);
  return importer.finish();
}

/** A line holds a body as base64 (4/3 of it) plus its JSON text and headers. */
function maxImportLineBytes(sb: Services): number {
  return Math.ceil(sb.config.receiver.max_body_bytes * 2.5) + 1024 * 1024;
}

export function isNdjsonRequest(req: IncomingMessage): boolean {
  return /^application\/(x-)?ndjson\b/i.test(req.headers['content-type'] ?? '');
}

/**
 * Waits for the socket to take more, or to go away. Both waiters are removed afterwards: a
 * long export waits thousands of times on the same response.
 */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
