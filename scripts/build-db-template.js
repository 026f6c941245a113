// Builds dist/pgdata-template.tar.gz: an empty embedded database, as PGlite's initdb makes it.
// A first start unpacks it instead of running initdb, which costs seconds of WASM work on every
// new data dir (docs/benchmarks.md). Built with the installed PGlite, so the two always match.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

export const TEMPLATE = join(dirname(import.meta.dirname), 'dist', 'pgdata-template.tar.gz');

export async function buildDatabaseTemplate() {
  const db = await PGlite.create('memory://');
  try {
    const tarball = await db.dumpDataDir('gzip');
    await mkdir(dirname(TEMPLATE), { recursive: true });
    await writeFile(TEMPLATE, Buffer.from(await tarball.arrayBuffer()));
  } finally {
    await db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await buildDatabaseTemplate();
