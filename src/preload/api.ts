import type { IpcRenderer, IpcRendererEvent } from 'electron';
import { API_METHODS, LIVE_CHANNEL, ipcChannel } from '../shared/api-methods.js';

/**
 * What the preload puts on `window.switchboard`: one function per contract method and
 * `onLive`, nothing else. Never a generic invoke/send/on, never the IPC event object (its
 * `sender` would hand the page an ipcRenderer). Runs sandboxed, so the only module it may
 * require is `electron`: everything else here must be bundled, hence this file imports only
 * the zod-free method list.
 */

/** How main answers every call (src/main/ipc.ts): thrown errors would lose their code crossing IPC. */
export type IpcResult<T = unknown> = { ok: true; value: T } | { ok: false; error: { code: string; message: string; hint?: string } };

export type SwitchboardBridge = Record<(typeof API_METHODS)[number], (input?: unknown) => Promise<unknown>> & {
  onLive(listener: (message: unknown) => void): () => void;
};

export function createSwitchboardBridge(ipc: Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>): SwitchboardBridge {
  const bridge: Record<string, unknown> = {};
  for (const method of API_METHODS) {
    const channel = ipcChannel(method);
    // Exactly one argument is forwarded, whatever the page passes.
    bridge[method] = async (input?: unknown) => {
      const result = (await ipc.invoke(channel, input)) as IpcResult;
      if (result.ok) return result.value;
      // A plain object survives contextBridge intact (an Error would keep only its message);
      // the renderer's client turns it back into an ApiRequestError.
      const { code, message, hint } = result.error;
      throw hint === undefined ? { code, message } : { code, message, hint };
    };
  }
  bridge.onLive = (listener: (message: unknown) => void) => {
    if (typeof listener !== 'function') throw new TypeError('onLive needs a function');
    const forward = (_event: IpcRendererEvent, message: unknown) => listener(message);
    ipc.on(LIVE_CHANNEL, forward);
    return () => {
      ipc.removeListener(LIVE_CHANNEL, forward);
    };
  };
  return Object.freeze(bridge) as SwitchboardBridge;
}
