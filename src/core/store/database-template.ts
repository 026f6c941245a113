import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { databaseTemplatePath } from '../paths.js';

/**
 * A first start unpacks an empty database (a gzipped tar made by PGlite itself at build time,
 * scripts/build-db-template.js) instead of letting PGlite run initdb: initdb costs seconds of
 * WASM work and ~800 MB of memory on every new data dir, unpacking ~100 ms. Without the template
 * (a bare `tsc` build) PGlite runs initdb as before.
 *
 * Synchronous writes: ~1,000 small files, once per data dir, before anything else can run;
 * one thread-pool round trip each would take longer than the writing.
 *
 * PG_VERSION is written last: PGlite takes a directory holding it for a database, so a start
 * interrupted while unpacking leaves a directory that the next start unpacks again.
 */

const BLOCK = 512;

export async function unpackDatabaseTemplate(pgdata: string): Promise<boolean> {
  if (existsSync(join(pgdata, 'PG_VERSION'))) return false;
  let packed: Buffer;
  try {
    packed = await readFile(databaseTemplatePath());
  } catch {
    return false;
  }
  const tar = gunzipSync(packed);
  let last: { path: string; data: Buffer } | undefined;
  for (let offset = 0; offset + BLOCK <= tar.length; ) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const name = field(header, 0, 100);
    const prefix = field(header, 345, 155);
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    offset += BLOCK;
    const data = tar.subarray(offset, offset + size);
    offset += Math.ceil(size / BLOCK) * BLOCK;
    const relative = normalize(`${prefix ? `${prefix}/` : ''}${name}`).replace(/^[/\\]+/, '');
    if (relative === '' || relative === '.' || relative.split(sep).includes('..')) continue;
    const path = join(pgdata, relative);
    if (type === '5') {
      mkdirSync(path, { recursive: true, mode: 0o700 });
    } else if (type === '0' || type === '\0') {
      if (relative === 'PG_VERSION') {
        last = { path, data };
        continue;
      }
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, data, { mode: 0o600 });
    }
  }
  if (!last) return false;
  writeFileSync(last.path, last.data, { mode: 0o600 });
  return true;
}

function field(header: Buffer, start: number, length: number): string {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? length : end).toString('utf8');
}
