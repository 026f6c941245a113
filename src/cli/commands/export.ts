import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Command, Option } from 'commander';
import { EXPORT_FORMATS } from '../../shared/api.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { CliError, EXIT_FAILED } from '../exit.js';
import { filtersOf, withFilterOptions, type FilterFlags } from '../filters.js';
import { isoTime } from '../args.js';

/**
 * `switchboard export` (DESIGN §12): streams `GET /api/export` to stdout or a file, oldest
 * first, without holding the log in memory. A file is written beside its name and renamed at
 * the end, so an interrupted export never leaves a file that looks complete.
 */

interface ExportFlags extends ClientFlags, FilterFlags {
  format: (typeof EXPORT_FORMATS)[number];
  since?: string;
  until?: string;
  output?: string;
}

export function exportCommand(): Command {
  return withClientOptions(
    withFilterOptions(
      new Command('export')
        .description('export events as NDJSON (re-importable, exact bytes) or HAR 1.2')
        .addOption(new Option('--format <format>', 'ndjson or har').choices(EXPORT_FORMATS).default('ndjson')),
    )
      .option('--since <time>', 'received at or after (ISO-8601 date or time, e.g. 2026-11-30 or 2026-11-30T09:00:00Z)', isoTime('--since'))
      .option('--until <time>', 'received before (ISO-8601 date or time)', isoTime('--until'))
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (flags: ExportFlags) => {
    const query = new URLSearchParams({ format: flags.format });
    const filters = { ...filtersOf(flags), ...(flags.since !== undefined ? { since: flags.since } : {}), ...(flags.until !== undefined ? { until: flags.until } : {}) };
    for (const [name, value] of Object.entries(filters)) query.set(name, value);
    const client = await connect(flags);
    const response = await client.get(`/api/export?${query}`);
    const body = Readable.fromWeb(response.body! as WebReadableStream<Uint8Array>);
    if (flags.output === undefined) {
      await pipeline(body, process.stdout, { end: false });
      return;
    }
    let lines = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
        done(null, chunk);
      },
    });
    const partial = `${flags.output}.partial`;
    try {
      await pipeline(body, count, createWriteStream(partial, { mode: 0o600 }));
      await rename(partial, flags.output);
    } catch (error) {
      await rm(partial, { force: true });
      throw new CliError(`export to ${flags.output} failed: ${(error as Error).message}`, EXIT_FAILED);
    }
    process.stderr.write(flags.format === 'ndjson' ? `exported ${lines} events to ${flags.output}\n` : `exported to ${flags.output}\n`);
  });
}
