import { API_METHODS, type ApiMethod } from '../../../shared/api-methods';
import { ApiErrorSchema, LiveMessageSchema, type ApiInput, type ApiOutput, type LiveMessage, type SwitchboardApi } from '../../../shared/api';
import { SseParser } from './sse';

/**
 * The renderer's one way to reach the core. In the desktop app the preload exposes
 * `window.switchboard` (IPC); in a browser it is HTTP + SSE on the control port, with the
 * bearer token taken from the URL fragment (`/#token=…`): browsers never send fragments to a
 * server, the token is kept in sessionStorage for reloads and then removed from the address bar
 * so it does not linger in history or get shared with a screenshot.
 */

export type LiveStatus = 'connecting' | 'open' | 'closed';

export interface Client extends SwitchboardApi {
  /** Subscribes to the live stream. `onStatus('open')` also fires after a reconnect: refetch then. */
  onLive(listener: (message: LiveMessage) => void, onStatus?: (status: LiveStatus) => void): () => void;
  readonly transport: 'ipc' | 'http';
  /**
   * GET /api/export with these query parameters, as a file (HTTP transport only: the desktop
   * window has no connection to the control port, so it offers the CLI command instead).
   */
  exportEvents?(query: Record<string, string>): Promise<Blob>;
}

/** What the Electron preload exposes (src/preload): the API methods by name, plus onLive. */
export type DesktopBridge = SwitchboardApi & { onLive(listener: (message: LiveMessage) => void): () => void };

declare global {
  interface Window {
    switchboard?: DesktopBridge;
  }
}

export const TOKEN_STORAGE_KEY = 'switchboard.token';

export class ApiRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

/**
 * The control token for this tab: from the fragment when present (then stored and scrubbed
 * from the address bar), else from sessionStorage.
 */
export function takeToken(location: Pick<Location, 'hash' | 'pathname' | 'search'>, storage: Storage, history: Pick<History, 'replaceState'>): string | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const fromFragment = fragment.get('token');
  if (fromFragment) {
    storage.setItem(TOKEN_STORAGE_KEY, fromFragment);
    fragment.delete('token');
    const rest = fragment.toString();
    history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
    return fromFragment;
  }
  return storage.getItem(TOKEN_STORAGE_KEY);
}

export interface HttpClientOptions {
  token: string | null;
  /** Origin of the control port; '' for same-origin (the served UI). */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Reconnect delays of the live stream, in ms. */
  backoffMs?: readonly number[];
}

const DEFAULT_BACKOFF_MS = [250, 500, 1000, 2000, 5000] as const;

export function createHttpClient(options: HttpClientOptions): Client {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const base = options.baseUrl ?? '';
  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};

  const call = async (method: ApiMethod, input: unknown): Promise<unknown> => {
    let response: Response;
    try {
      response = await doFetch(`${base}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify(input ?? {}),
      });
    } catch {
      throw new ApiRequestError('unreachable', 'switchboard is not answering', 'is `switchboard serve` still running?');
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (response.ok) return body;
    if (response.status === 401) {
      throw new ApiRequestError('unauthorized', 'this page has no valid control token', 'open the web UI link printed by `switchboard serve` (it ends in #token=…)');
    }
    const error = ApiErrorSchema.safeParse((body as { error?: unknown } | undefined)?.error);
    if (error.success) throw new ApiRequestError(error.data.code, error.data.message, error.data.hint);
    throw new ApiRequestError('internal', `switchboard answered ${response.status}`);
  };

  const api = Object.fromEntries(API_METHODS.map((method) => [method, (input: unknown) => call(method, input)])) as unknown as SwitchboardApi;

  const onLive: Client['onLive'] = (listener, onStatus) => {
    const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    const controller = new AbortController();
    let attempt = 0;
    let stopped = false;

    const run = async () => {
      while (!stopped) {
        onStatus?.('connecting');
        try {
          const response = await doFetch(`${base}/api/live`, { headers: auth, signal: controller.signal });
          if (!response.ok || !response.body) throw new Error(`live stream answered ${response.status}`);
          attempt = 0;
          onStatus?.('open');
          const parser = new SseParser((data) => {
            let json: unknown;
            try {
              json = JSON.parse(data);
            } catch {
              return;
            }
            const message = LiveMessageSchema.safeParse(json);
            if (message.success) listener(message.data);
          });
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.push(value);
          }
        } catch {
          // fall through to the reconnect below
        }
        if (stopped) break;
        onStatus?.('closed');
        const delay = backoff[Math.min(attempt, backoff.length - 1)] ?? 1000;
        attempt++;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    };
    void run();
    return () => {
      stopped = true;
      controller.abort();
    };
  };

  const exportEvents = async (query: Record<string, string>): Promise<Blob> => {
    const response = await doFetch(`${base}/api/export?${new URLSearchParams(query).toString()}`, { headers: auth });
    if (!response.ok) {
      const error = ApiErrorSchema.safeParse(((await response.json().catch(() => undefined)) as { error?: unknown } | undefined)?.error);
      throw error.success ? new ApiRequestError(error.data.code, error.data.message, error.data.hint) : new ApiRequestError('internal', `export answered ${response.status}`);
    }
    return response.blob();
  };

  return { ...api, onLive, exportEvents, transport: 'http' };
}

export function createDesktopClient(bridge: DesktopBridge): Client {
  const api = Object.fromEntries(
    API_METHODS.map((method) => [
      method,
      async (input: unknown) => {
        try {
          return await (bridge[method] as (input: unknown) => Promise<unknown>)(input);
        } catch (error) {
          // The shell rejects with { code, message, hint? } (the contract's ApiError).
          const parsed = ApiErrorSchema.safeParse(error);
          if (parsed.success) throw new ApiRequestError(parsed.data.code, parsed.data.message, parsed.data.hint);
          throw error;
        }
      },
    ]),
  ) as unknown as SwitchboardApi;
  return {
    ...api,
    transport: 'ipc',
    onLive(listener, onStatus) {
      onStatus?.('open');
      return bridge.onLive(listener);
    },
  };
}

/** The client for this window: IPC in the desktop app, else HTTP with the fragment token. */
export function createClient(): Client {
  if (window.switchboard) return createDesktopClient(window.switchboard);
  return createHttpClient({ token: takeToken(window.location, window.sessionStorage, window.history) });
}

export type { ApiInput, ApiOutput };
