import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The package root (where package.json, migrations/ and out/renderer live), found by walking up
 * from this file. The same code runs from src/ (tests), dist/ (CLI) and out/main (Electron).
 */
let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  let dir = import.meta.dirname;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && existsSync(join(dir, 'migrations'))) {
      root = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`switchboard: cannot find the package root above ${import.meta.dirname}`);
    dir = parent;
  }
}

export const migrationsDir = (): string => join(packageRoot(), 'migrations');
export const rendererDir = (): string => join(packageRoot(), 'out', 'renderer');
/** The empty database a first start unpacks (scripts/build-db-template.js); absent in a bare tsc build. */
export const databaseTemplatePath = (): string => join(packageRoot(), 'dist', 'pgdata-template.tar.gz');

let version: string | undefined;
export function switchboardVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
