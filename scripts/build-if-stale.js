// Builds what `serve` and the tests need, only when sources are newer than the build output.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = dirname(import.meta.dirname);

function newest(paths) {
  let latest = 0;
  const walk = (path) => {
    if (!existsSync(path)) return;
    const info = statSync(path);
    if (info.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
    else latest = Math.max(latest, info.mtimeMs);
  };
  paths.forEach((path) => walk(join(root, path)));
  return latest;
}

function mtime(path) {
  const full = join(root, path);
  return existsSync(full) ? statSync(full).mtimeMs : 0;
}

function run(command, args, { tolerate } = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0 && tolerate?.()) {
    process.stderr.write('switchboard: the build reported errors but produced output; `npm run typecheck` shows them\n');
    return;
  }
  if (result.status !== 0) {
    process.stderr.write(`switchboard: build failed (${command} ${args.join(' ')})\n`);
    process.exit(result.status ?? 1);
  }
}

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const electronVite = join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');

export function buildCoreIfStale() {
  if (mtime('dist/cli/index.js') < newest(['src/core', 'src/shared', 'src/cli', 'tsconfig.cli.json', 'package.json'])) {
    process.stderr.write('switchboard: building the core…\n');
    // tsc emits despite type errors; those are the typecheck step's to report, not a reason to
    // refuse to run the tests.
    run(process.execPath, [tsc, '-p', 'tsconfig.cli.json'], { tolerate: () => existsSync(join(root, 'dist/cli/index.js')) });
  }
  // The empty database a first start unpacks (scripts/build-db-template.js); rebuilt when PGlite changes.
  if (mtime('dist/pgdata-template.tar.gz') < mtime('node_modules/@electric-sql/pglite/package.json')) {
    process.stderr.write('switchboard: building the empty database template…\n');
    run(process.execPath, [join(root, 'scripts', 'build-db-template.js')]);
  }
}

export function buildRendererIfStale() {
  if (mtime('out/renderer/index.html') < newest(['src/renderer', 'src/shared', 'electron.vite.config.ts'])) {
    process.stderr.write('switchboard: building the web UI…\n');
    // A failed build keeps the previous output usable for tests; `electron-vite build` in CI reports it.
    run(process.execPath, [electronVite, 'build'], { tolerate: () => existsSync(join(root, 'out/renderer/index.html')) });
  }
}

/** The whole desktop app (main, preload, renderer) and the database template it unpacks: what test/desktop launches. */
export function buildAppIfStale() {
  buildCoreIfStale();
  const built = Math.min(mtime('out/main/index.js'), mtime('out/preload/index.cjs'), mtime('out/renderer/index.html'));
  if (built < newest(['src', 'electron.vite.config.ts', 'package.json'])) {
    process.stderr.write('switchboard: building the desktop app…\n');
    run(process.execPath, [electronVite, 'build']);
  }
}
