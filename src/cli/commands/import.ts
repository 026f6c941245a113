import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { Command } from 'commander';
import { ImportEventsOutputSchema } from '../../shared/api.js';
import { connect, withClientOptions, type ClientFlags } from '../client.js';
import { CliError, EXIT_FAILED, usageError } from '../exit.js';
import { terminalSafe } from '../terminal-safe.js';

/**
 * `switchboard import FILE` (DESIGN §12): streams an NDJSON export to `POST /api/import`; the
 * events are stored with `origin: "import"`, deduplicated. Lines that cannot be imported are
 * listed with their line numbers, and make the exit code 1; the others are imported anyway.
 */

interface ImportFlags extends ClientFlags {
  json?: boolean;
}

export function importCommand(): Command {
  return withClientOptions(
    new Command('import')
      .description('import an NDJSON export (events are stored with origin "import")')
      .argument('<file>', 'an NDJSON file written by `switchboard export` ("-" for stdin)')
      .option('--json', 'print {imported, duplicates, errors, error_count, warnings?} as JSON'),
  ).action(async (file: string, flags: ImportFlags) => {
    if (file !== '-') await refuseUnreadable(file);
    const client = await connect(flags);
    const source = file === '-' ? process.stdin : createReadStream(file);
    const response = await client.post('/api/import', Readable.toWeb(source) as ReadableStream<Uint8Array>, 'application/x-ndjson');
    const result = ImportEventsOutputSchema.parse(await response.json());
    if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else {
      process.stdout.write(`imported ${result.imported} event${result.imported === 1 ? '' : 's'}, ${result.duplicates} already stored\n`);
      for (const warning of result.warnings ?? []) process.stderr.write(`  note: ${terminalSafe(warning)}
`);
      for (const error of result.errors) process.stderr.write(`  line ${error.line}: ${terminalSafe(error.message)}
`);
      if (result.error_count > result.errors.length) process.stderr.write(`  … and ${result.error_count - result.errors.length} more\n`);
    }
    if (result.error_count > 0) throw new CliError(`${result.error_count} line${result.error_count === 1 ? '' : 's'} of ${file} not imported`, EXIT_FAILED);
  });
}

/**
 * One line for a file that cannot be imported at all: missing, unreadable, a directory, or a HAR
 * file. HAR is refused, not imported: it keeps headers and bodies as text for people and tools,
 * not the exact bytes a signature was made over, so an event imported from it could never be
 * replayed faithfully (README: "Export and import").
 */
async function refuseUnreadable(file: string): Promise<void> {
  let head: string;
  try {
    const handle = await open(file, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
      head = buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : ((error as Error).message ?? code);
    throw usageError(`cannot import ${file}: ${why}`);
  }
  if (/^\s*\{\s*"log"\s*:/.test(head)) {
    throw usageError(`cannot import ${file}: it is a HAR file, and switchboard imports only its own NDJSON exports (HAR does not keep the exact bytes signatures were made over) — export with: switchboard export --format ndjson`);
  }
}
