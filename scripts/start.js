// `npm start`: the desktop app in development (`electron-vite dev`), after checking that it can
// run at all. Electron 42+ has no postinstall: its binary downloads on the first `electron` run,
// so after an offline install (or a failed download) electron-vite only says
// "Error: Electron uninstall" with a stack. This says what happened and what to run instead.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

const SERVE_INSTEAD = '`npm run serve` runs the same app in your browser, without Electron';

/**
 * Where the Electron binary is, resolved the way `electron` and electron-vite resolve it
 * (ELECTRON_EXEC_PATH, ELECTRON_OVERRIDE_DIST_PATH, else `dist/` + `path.txt` of the package),
 * without requiring the package: its index.js starts a download when the binary is missing.
 * Returns `{ path }`, or `{ problem, fix }` in words for the person at the terminal.
 */
export function findElectronBinary({ electronDir = packageDir(), env = process.env } = {}) {
  if (env.ELECTRON_EXEC_PATH) {
    return existsSync(env.ELECTRON_EXEC_PATH)
      ? { path: env.ELECTRON_EXEC_PATH }
      : { problem: `ELECTRON_EXEC_PATH is set to ${env.ELECTRON_EXEC_PATH}, which does not exist.`, fix: [`unset ELECTRON_EXEC_PATH or point it at an Electron executable`, SERVE_INSTEAD] };
  }
  if (electronDir === null) {
    return { problem: 'the electron package is not installed (node_modules/electron is missing).', fix: ['run `npm install` (it installs the devDependencies, electron among them)', SERVE_INSTEAD] };
  }
  const pathFile = join(electronDir, 'path.txt');
  const executable = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : '';
  const version = readVersion(electronDir);
  const download = [
    `run \`npx electron --version\` to download it (needs internet; behind a proxy or mirror set ELECTRON_MIRROR), then \`npm start\` again`,
    SERVE_INSTEAD,
  ];
  if (env.ELECTRON_OVERRIDE_DIST_PATH) {
    const path = join(env.ELECTRON_OVERRIDE_DIST_PATH, executable || defaultExecutable());
    return existsSync(path) ? { path } : { problem: `ELECTRON_OVERRIDE_DIST_PATH is set, but ${path} does not exist.`, fix: ['unset ELECTRON_OVERRIDE_DIST_PATH or point it at an unpacked Electron', SERVE_INSTEAD] };
  }
  const path = join(electronDir, 'dist', executable || defaultExecutable());
  if (executable === '' || !existsSync(path)) {
    return {
      problem: `the Electron ${version} binary is not installed (${relative(process.cwd(), path) || path} is missing). Electron downloads it on first use; that has not happened or failed (offline, a proxy, or an interrupted download).`,
      fix: download,
    };
  }
  return { path };
}

function packageDir() {
  try {
    return dirname(require.resolve('electron/package.json'));
  } catch {
    return null;
  }
}

function readVersion(electronDir) {
  try {
    return JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')).version;
  } catch {
    return '(unknown version)';
  }
}

function defaultExecutable() {
  if (process.platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron';
  return process.platform === 'win32' ? 'electron.exe' : 'electron';
}

/** On Linux, Electron needs a display; without one it aborts with a line about X11 and no fix. */
export function displayProblem(env = process.env, platform = process.platform) {
  if (platform !== 'linux' || env.DISPLAY || env.WAYLAND_DISPLAY) return null;
  return { problem: 'there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set), and the desktop app needs one.', fix: ['start it from a desktop session (or `xvfb-run npm start`)', SERVE_INSTEAD] };
}

function refuse({ problem, fix }) {
  process.stderr.write(`switchboard: cannot start the desktop app: ${problem}\n${fix.map((line, i) => `  ${i === 0 ? 'fix' : ' or'}: ${line}`).join('\n')}\n`);
  process.exit(1);
}

function main() {
  const binary = findElectronBinary();
  if (!('path' in binary)) refuse(binary);
  const display = displayProblem();
  if (display) refuse(display);
  const child = spawn(process.execPath, [require.resolve('electron-vite/bin/electron-vite.js'), 'dev', ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, ELECTRON_EXEC_PATH: binary.path },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
