import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JS script, checked by running it
import { displayProblem, findElectronBinary } from '../../scripts/start.js';

const ROOT = join(import.meta.dirname, '..', '..');
const START = join(ROOT, 'scripts', 'start.js');
const INSTALLED = join(ROOT, 'node_modules', 'electron', 'dist');

/** `npm start`'s script as a user runs it, with nothing of the test process's env left to chance. */
function runStart(env: Record<string, string | undefined>) {
  const clean = { ...process.env, ELECTRON_EXEC_PATH: undefined, ELECTRON_OVERRIDE_DIST_PATH: undefined, DISPLAY: ':99', ...env };
  return spawnSync(process.execPath, [START], { cwd: ROOT, env: clean as NodeJS.ProcessEnv, encoding: 'utf8', timeout: 30_000 });
}

function expectRefusal(result: ReturnType<typeof runStart>, problem: RegExp) {
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(new RegExp(`^switchboard: cannot start the desktop app: ${problem.source}`));
  expect(result.stderr).toContain('or: `npm run serve` runs the same app in your browser, without Electron');
  expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack
  expect(result.stderr).not.toMatch(/Electron uninstall/);
  expect(result.stdout).not.toMatch(/vite|electron-vite/); // electron-vite never ran
}

describe('npm start (scripts/start.js)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-start-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.skipIf(existsSync(INSTALLED))('without the Electron binary (as on this machine): says what happened and what to run, no stack', () => {
    const result = runStart({});
    expectRefusal(result, /the Electron 45\.5\.0 binary is not installed \(node_modules\/electron\/dist\/electron is missing\)/);
    expect(result.stderr).toContain('fix: run `npx electron --version` to download it');
  });

  it('with ELECTRON_OVERRIDE_DIST_PATH or ELECTRON_EXEC_PATH pointing nowhere', () => {
    expectRefusal(runStart({ ELECTRON_OVERRIDE_DIST_PATH: join(dir, 'empty') }), /ELECTRON_OVERRIDE_DIST_PATH is set, but .* does not exist/);
    expectRefusal(runStart({ ELECTRON_EXEC_PATH: join(dir, 'no-electron') }), /ELECTRON_EXEC_PATH is set to .*no-electron, which does not exist/);
  });

  it('on Linux without a display, before Electron aborts about X11', async () => {
    const fake = join(dir, 'electron-bin');
    await writeFile(fake, '#!/bin/sh\nexit 0\n');
    await chmod(fake, 0o755);
    if (process.platform === 'linux') {
      expectRefusal(runStart({ ELECTRON_EXEC_PATH: fake, DISPLAY: undefined, WAYLAND_DISPLAY: undefined }), /there is no display/);
    }
    expect(displayProblem({ DISPLAY: ':0' }, 'linux')).toBeNull();
    expect(displayProblem({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBeNull();
    expect(displayProblem({}, 'darwin')).toBeNull();
  });

  it('finds the binary the way electron and electron-vite do (path.txt + dist/)', async () => {
    const pkg = join(dir, 'electron');
    await mkdir(join(pkg, 'dist'), { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ version: '45.5.0' }));
    expect(findElectronBinary({ electronDir: pkg, env: {} })).toMatchObject({ problem: expect.stringMatching(/binary is not installed/) });
    await writeFile(join(pkg, 'path.txt'), 'electron');
    expect(findElectronBinary({ electronDir: pkg, env: {} })).toMatchObject({ problem: expect.stringMatching(/dist\/electron is missing/) });
    await writeFile(join(pkg, 'dist', 'electron'), '');
    expect(findElectronBinary({ electronDir: pkg, env: {} })).toEqual({ path: join(pkg, 'dist', 'electron') });
    expect(findElectronBinary({ electronDir: null, env: {} })).toMatchObject({ problem: expect.stringMatching(/electron package is not installed/), fix: [expect.stringMatching(/npm install/), expect.any(String)] });
  });
});
