import type { App } from 'electron';

/**
 * One switchboard per user: a second one would fight the first for the ports and the database
 * directory. The second launch hands over to the first (which shows its window) and exits.
 * Returns false in that second process, which must then do nothing else.
 */
export function setupSingleInstance(app: Pick<App, 'requestSingleInstanceLock' | 'on' | 'quit'>, showWindow: () => void): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', () => showWindow());
  return true;
}
