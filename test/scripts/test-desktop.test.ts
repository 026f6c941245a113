import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JS script, checked by running it
import { desktopCommand } from '../../scripts/test-desktop.js';

// `npm run test:desktop` (scripts/test-desktop.js): where it runs the desktop suite, and what it
// says where the suite cannot run. No Electron binary can be had here, so the suite's own tests
// run where Electron does (.github/workflows/desktop.yml); this is its skip path, for real.

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'test-desktop.js');
// Points Electron's own resolution at nothing, so the run is the same on a machine that has the binary.
const NO_ELECTRON = { ELECTRON_OVERRIDE_DIST_PATH: join(ROOT, 'no-electron-here'), ELECTRON_EXEC_PATH: '' };
const testDesktop = (env: Record<string, string>) =>
  spawnSync(process.execPath, [SCRIPT], { cwd: ROOT, env: { ...process.env, CI: '', NO_COLOR: '1', FORCE_COLOR: '0', ...NO_ELECTRON, ...env }, encoding: 'utf8', timeout: 180_000 });

describe('npm run test:desktop', () => {
  it('runs vitest under xvfb-run on Linux without a display, when xvfb-run exists', () => {
    const bare = desktopCommand(['--reporter=dot'], { env: {}, platform: 'linux', hasXvfbRun: true });
    expect(bare.command).toBe('xvfb-run');
    expect(bare.args.slice(0, 3)).toEqual(['-a', '--server-args=-screen 0 1440x900x24', process.execPath]);
    expect(bare.args.slice(3)).toEqual([join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(ROOT, 'vitest.desktop.config.ts'), '--reporter=dot']);
    expect(desktopCommand([], { env: { DISPLAY: ':0' }, platform: 'linux', hasXvfbRun: true }).command).toBe(process.execPath);
    expect(desktopCommand([], { env: {}, platform: 'linux', hasXvfbRun: false }).command).toBe(process.execPath);
    expect(desktopCommand([], { env: {}, platform: 'darwin', hasXvfbRun: true }).command).toBe(process.execPath);
  });

  it('without Electron: passes, skipping the whole suite with one line that says why and where it runs', () => {
    const result = testDesktop({});
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.status).toBe(0);
    const lines = output.split('\n').filter((line) => line.includes('SKIPPING'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^!!! SKIPPING the desktop window suite \(test\/desktop\): no Electron binary: ELECTRON_OVERRIDE_DIST_PATH is set, but .* does not exist\. It runs where Electron does: `npm run test:desktop`, and \.github\/workflows\/desktop\.yml on Linux, macOS and Windows !!!$/);
    expect(output).toMatch(/Tests\s+(\d+) skipped \(\1\)/);
  });

  it('fails instead when the suite is required (the desktop workflow), naming what is missing', () => {
    const result = testDesktop({ SWITCHBOARD_DESKTOP_REQUIRED: '1' });
    expect(result.status).not.toBe(0);
    expect(`${result.stdout}\n${result.stderr}`).toMatch(/the desktop window suite must run here \(SWITCHBOARD_DESKTOP_REQUIRED=1\) but cannot: no Electron binary/);
  });
});
