import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
// @ts-expect-error: plain JS scripts, checked by running them (test/scripts)
import { displayProblem, findElectronBinary } from '../../scripts/start.js';

/**
 * Decides once per run whether the desktop window suite (test/desktop) can run here: it needs
 * the Electron binary (which these machines cannot download) and, on Linux, a display. Where it
 * can, the app is built first (out/ from src/, when stale). Where it cannot, the suite skips
 * with one line saying why (printed by the first desktop file that runs, so a run of other
 * files says nothing) — unless SWITCHBOARD_DESKTOP_REQUIRED=1 (the desktop CI workflow), where
 * a suite that cannot run fails instead of passing quietly.
 */

export interface DesktopContext {
  /** Why the suite cannot run here, or null when it can. */
  skip: string | null;
  /** Marks that the skip line was printed for this run (the first desktop file creates it). */
  skipMarker: string;
  /** The Electron binary (the electron package's, or ELECTRON_EXEC_PATH / ELECTRON_OVERRIDE_DIST_PATH). */
  electronPath: string | null;
  /** ELECTRON_EXEC_PATH named it: Playwright is given it (and then does not inject its loader). */
  fromEnv: boolean;
}

declare module 'vitest' {
  export interface ProvidedContext {
    desktop: DesktopContext;
  }
}

export function desktopSkipReason(env: NodeJS.ProcessEnv = process.env): { skip: string | null; electronPath: string | null } {
  const binary = findElectronBinary({ env }) as { path?: string; problem?: string };
  if (!binary.path) return { skip: `no Electron binary: ${binary.problem!.replace(/\.$/, '')}`, electronPath: null };
  const display = displayProblem(env) as { problem: string } | null;
  if (display) return { skip: `${display.problem.replace(/\.$/, '')} (npm run test:desktop runs it under xvfb-run)`, electronPath: binary.path };
  return { skip: null, electronPath: binary.path };
}

export default async function setup(project: TestProject): Promise<() => void> {
  const { skip, electronPath } = desktopSkipReason();
  if (skip && process.env.SWITCHBOARD_DESKTOP_REQUIRED === '1') {
    throw new Error(`the desktop window suite must run here (SWITCHBOARD_DESKTOP_REQUIRED=1) but cannot: ${skip}`);
  }
  if (!skip) {
    // @ts-expect-error plain JS build helper without types
    const { buildAppIfStale } = await import('../../scripts/build-if-stale.js');
    buildAppIfStale();
  }
  const skipMarker = join(tmpdir(), `switchboard-desktop-skip-${process.pid}-${Date.now()}`);
  project.provide('desktop', { skip, skipMarker, electronPath, fromEnv: Boolean(process.env.ELECTRON_EXEC_PATH) });
  return () => rmSync(skipMarker, { force: true });
}
