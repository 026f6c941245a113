// `npm run test:desktop [-- --package] [vitest args…]`: the real desktop window suite
// (test/desktop, Playwright's Electron support), on its own. On Linux without a display it runs
// under `xvfb-run` when that exists. `--package` first builds the app and packs it with
// `electron-builder --dir` (needs the internet once, for the Electron distribution), so the
// packaged-app test runs too. Without an Electron binary the suite skips with one line saying so
// (SWITCHBOARD_DESKTOP_REQUIRED=1 makes that a failure, as in .github/workflows/desktop.yml).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildAppIfStale } from './build-if-stale.js';
import { displayProblem, findElectronBinary } from './start.js';

const root = dirname(import.meta.dirname);
const require = createRequire(import.meta.url);

/** The command that runs vitest on the desktop suite: under xvfb-run when Linux has no display and xvfb-run exists. */
export function desktopCommand(args, { env = process.env, platform = process.platform, hasXvfbRun = commandExists('xvfb-run') } = {}) {
  const vitest = [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(root, 'vitest.desktop.config.ts'), ...args];
  if (displayProblem(env, platform) && hasXvfbRun) {
    // -a: a free display number (several runs may share the machine); a screen like a laptop's.
    return { command: 'xvfb-run', args: ['-a', '--server-args=-screen 0 1440x900x24', process.execPath, ...vitest] };
  }
  return { command: process.execPath, args: vitest };
}

function commandExists(name) {
  if (process.platform === 'win32') return false;
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env, shell: process.platform === 'win32' && command !== process.execPath });
  return result.status ?? 1;
}

function main() {
  const args = process.argv.slice(2);
  const pack = args.includes('--package');
  const vitestArgs = args.filter((arg) => arg !== '--package');
  const env = { ...process.env };
  if ('path' in findElectronBinary()) {
    buildAppIfStale();
    if (pack) {
      process.stderr.write('switchboard: packing the app (electron-builder --dir)…\n');
      const status = run(process.execPath, [require.resolve('electron-builder/cli.js'), '--dir', '--publish', 'never']);
      if (status !== 0) process.exit(status);
      // The packaged-app test must then find the package (it fails instead of skipping).
      env.SWITCHBOARD_DESKTOP_PACKAGE = '1';
    }
  }
  const { command, args: commandArgs } = desktopCommand(vitestArgs, { env });
  process.exit(run(command, commandArgs, env));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
