import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { build, type Rollup } from 'vite';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_METHODS, LIVE_CHANNEL, ipcChannel } from '../../src/shared/api-methods.js';

// The preload as the sandbox will run it: bundled to one CommonJS file (as electron-vite does,
// with the same Vite underneath), then evaluated in a fresh context whose `require` knows only
// 'electron' (a sandboxed preload can require nothing else) and whose electron module is a fake
// contextBridge/ipcRenderer that records what the preload does with them.

let code: string;

beforeAll(async () => {
  const output = (await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      ssr: join(import.meta.dirname, '../../src/preload/index.ts'),
      rollupOptions: { external: ['electron', ...builtinModules, ...builtinModules.map((name) => `node:${name}`)], output: { format: 'cjs' } },
    },
  })) as Rollup.RollupOutput;
  code = output.output[0].code;
}, 60_000);

function evaluatePreload() {
  const exposed: Record<string, unknown> = {};
  const required: string[] = [];
  const invoked: { channel: string; args: unknown[] }[] = [];
  const listeners = new Map<string, ((event: unknown, message: unknown) => void)[]>();
  const ipcRenderer = {
    invoke: async (channel: string, ...args: unknown[]) => {
      invoked.push({ channel, args });
      return channel === ipcChannel('getEvent') ? { ok: false, error: { code: 'not_found', message: 'there is no event 9', hint: 'h' } } : { ok: true, value: { echo: args[0] } };
    },
    on: (channel: string, listener: (event: unknown, message: unknown) => void) => listeners.set(channel, [...(listeners.get(channel) ?? []), listener]),
    removeListener: (channel: string, listener: (event: unknown, message: unknown) => void) =>
      listeners.set(channel, (listeners.get(channel) ?? []).filter((l) => l !== listener)),
    send: () => {
      throw new Error('the preload must not use ipcRenderer.send');
    },
  };
  const contextBridge = {
    exposeInMainWorld: (key: string, api: unknown) => {
      exposed[key] = api;
    },
  };
  const require = (name: string) => {
    required.push(name);
    if (name !== 'electron') throw new Error(`module not found: ${name} (a sandboxed preload can only require electron)`);
    return { contextBridge, ipcRenderer };
  };
  const module = { exports: {} };
  runInNewContext(code, { require, module, exports: module.exports, console });
  return { exposed, required, invoked, listeners };
}

describe('the bundled preload', () => {
  it('requires nothing but electron, and bundles no zod', () => {
    const { required } = evaluatePreload();
    expect(new Set(required)).toEqual(new Set(['electron']));
    expect(code).not.toMatch(/require\((?!["']electron["'])/);
    expect(code).not.toMatch(/ZodError|\$ZodType|z\.(object|string|enum)\(/);
    expect(code.length).toBeLessThan(8_000);
  });

  it('exposes exactly one object, window.switchboard, with exactly the contract’s methods and onLive', () => {
    const { exposed } = evaluatePreload();
    expect(Object.keys(exposed)).toEqual(['switchboard']);
    const api = exposed.switchboard as Record<string, unknown>;
    expect(Object.keys(api).sort()).toEqual([...API_METHODS, 'onLive'].sort());
    for (const value of Object.values(api)) expect(typeof value).toBe('function');
    for (const generic of ['invoke', 'send', 'on', 'sendSync', 'ipcRenderer', 'removeListener']) expect(api).not.toHaveProperty(generic);
  });

  it('sends each method on its own channel with exactly one argument, whatever the page passes', async () => {
    const { exposed, invoked } = evaluatePreload();
    const api = exposed.switchboard as Record<string, (...args: unknown[]) => Promise<unknown>>;
    expect(await api.listEvents!({ limit: 5 }, 'extra', { more: true })).toEqual({ echo: { limit: 5 } });
    expect(invoked).toEqual([{ channel: 'switchboard:listEvents', args: [{ limit: 5 }] }]);
  });

  it('rejects with the plain { code, message, hint } main returned', async () => {
    const { exposed } = evaluatePreload();
    const api = exposed.switchboard as Record<string, (...args: unknown[]) => Promise<unknown>>;
    await expect(api.getEvent!({ id: 9 })).rejects.toEqual({ code: 'not_found', message: 'there is no event 9', hint: 'h' });
  });

  it('onLive passes the message alone (never the IPC event, whose sender is an ipcRenderer) and unsubscribes', () => {
    const { exposed, listeners } = evaluatePreload();
    const api = exposed.switchboard as { onLive: (listener: (...args: unknown[]) => void) => () => void };
    const received: unknown[][] = [];
    const unsubscribe = api.onLive((...args) => received.push(args));
    const [listener] = listeners.get(LIVE_CHANNEL)!;
    listener!({ sender: { send: 'ipcRenderer' } }, { type: 'config-changed' });
    expect(received).toEqual([[{ type: 'config-changed' }]]);
    unsubscribe();
    expect(listeners.get(LIVE_CHANNEL)).toEqual([]);
    // (A TypeError from the preload's own realm, hence matched by message.)
    expect(() => api.onLive('not a function' as never)).toThrow('onLive needs a function');
  });
});
