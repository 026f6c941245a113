import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { toApiError } from '../core/api/api-error.js';
import { subscribeLive } from '../core/api/live.js';
import { formatPath } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { Services } from '../core/services.js';
import { API, type ApiError, type SwitchboardApi } from '../shared/api.js';
import { API_METHODS, LIVE_CHANNEL, ipcChannel, type ApiMethod } from '../shared/api-methods.js';
import type { IpcResult } from '../preload/api.js';

/**
 * The IPC transport of the UI API (src/shared/api.ts): one `ipcMain.handle` per method, every
 * call through one wrapper.
 *
 * Defends against: messages from anything but our own page (a frame we did not create, an
 * iframe inside ours, a page the window was somehow navigated to), arguments the contract does
 * not allow, and internal error messages (paths, queries) reaching the renderer. Errors cross
 * as a result value because Electron reduces a thrown error to its message.
 */

export interface SenderPolicy {
  /** The web contents of our window, if open. */
  contents: () => WebContents | null;
  isAppUrl: (url: string) => boolean;
}

type SenderEvent = Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>;

export function isTrustedSender(event: SenderEvent, { contents, isAppUrl }: SenderPolicy): boolean {
  const ours = contents();
  if (ours === null || event.sender.id !== ours.id) return false;
  const frame = event.senderFrame;
  // Null when the frame navigated or was destroyed since it sent; parent set for iframes.
  if (frame === null || frame.parent !== null) return false;
  return isAppUrl(frame.url);
}

export interface IpcDeps {
  /**
   * The running core's API, asked at each call: a promise while the core is starting (calls made
   * meanwhile wait), a new one after the shell started the core again (core-runner.ts).
   */
  api: () => SwitchboardApi | Promise<SwitchboardApi>;
  senders: SenderPolicy;
  logger: Logger;
}

/** The wrapper: sender → one argument → schema → handler → `IpcResult`. Never throws. */
export function createIpcHandler(method: ApiMethod, { api, senders, logger }: IpcDeps) {
  const fail = (error: ApiError): IpcResult => ({ ok: false, error });
  return async (event: SenderEvent, ...args: unknown[]): Promise<IpcResult> => {
    if (!isTrustedSender(event, senders)) {
      logger.warn(`ipc ${method}: refused a call from a frame that is not the switchboard window (${event.senderFrame?.url.split(/[?#]/)[0] ?? 'no frame'})`);
      return fail({ code: 'forbidden', message: 'this frame may not call switchboard' });
    }
    if (args.length > 1) return fail({ code: 'invalid_argument', message: `${method}: takes one input object, got ${args.length} arguments` });
    const parsed = API[method].input.safeParse(args[0] ?? {});
    if (!parsed.success) {
      const detail = parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join('; ');
      return fail({ code: 'invalid_argument', message: `${method}: ${detail}` });
    }
    try {
      const call = (await api())[method] as (input: unknown) => Promise<unknown>;
      return { ok: true, value: await call(parsed.data) };
    } catch (error) {
      return fail(toApiError(error, logger, `ipc ${method}`));
    }
  };
}

/** Registers every method of the contract; returns the function that removes them again. */
export function setupIpc(ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>, deps: IpcDeps): () => void {
  for (const method of API_METHODS) ipcMain.handle(ipcChannel(method), createIpcHandler(method, deps));
  return () => {
    for (const method of API_METHODS) ipcMain.removeHandler(ipcChannel(method));
  };
}

/** Pushes the live stream to our window while it shows our page; returns the unsubscribe. */
export function setupLive(sb: Services, senders: SenderPolicy): () => void {
  return subscribeLive(sb, (message) => {
    const contents = senders.contents();
    if (contents !== null && !contents.isDestroyed() && senders.isAppUrl(contents.getURL())) contents.send(LIVE_CHANNEL, message);
  });
}
