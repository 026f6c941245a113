import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { API, type ApiInput, type ApiOutput, type LiveMessage } from '../shared/api.js';
import type { ApiMethod } from '../shared/api-methods.js';
import { IDENTITY_KEY_FILE, identityProof, TOKEN_FILE } from '../core/control/auth.js';
import { CONTROL_URL_FILE, resolveDataDir } from './data-dir.js';
import { CliError, EXIT_FAILED, EXIT_USAGE, usageError } from './exit.js';

/**
 * The CLI's side of the control API (`/api` on the control port, the same routes the web UI
 * uses). Which instance: `--control-url`, else the URL `serve` recorded in the data dir, else
 * `control.host`/`control.port` from its config.json, else 127.0.0.1:7778. The token:
 * `--token`, else `SWITCHBOARD_TOKEN`, else `<data dir>/control-token`. The token is only ever
 * sent to that URL; it is never printed. Unless the URL was given with `--control-url` (the
 * user's own choice), the instance there must first prove it owns the data dir (`GET /identity`,
 * src/core/control/auth.ts): a program listening on a stale recorded port never sees the token.
 */

export interface ClientFlags {
  dataDir?: string;
  controlUrl?: string;
  token?: string;
}

const DEFAULT_CONTROL = { host: '127.0.0.1', port: 7778 };
/** Connection failures that mean "nothing is listening there". */
const NOT_ANSWERING = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);

/** The options every client verb takes. */
export function withClientOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'data dir of the running switchboard ($SWITCHBOARD_HOME or ~/.switchboard)')
    .option('--control-url <url>', 'control URL of the running switchboard (default: the one it recorded in the data dir, else http://127.0.0.1:7778)')
    .option('--token <token>', 'control token (default: $SWITCHBOARD_TOKEN, else <data dir>/control-token)');
}

/** Whose identity the client checks before the token leaves: the data dir it was read from. */
export interface IdentityCheck {
  dataDir: string;
}

export class ControlClient {
  private identified: Promise<void> | undefined;

  constructor(
    readonly base: URL,
    private readonly token: string | undefined,
    /** How `serve` would be started for this data dir, for the "start one" line. */
    private readonly startCommand: string,
    /** Absent for an explicit `--control-url`: then the user chose whom to talk to. */
    private readonly identity?: IdentityCheck,
  ) {}

  get where(): string {
    return this.base.host;
  }

  async call<M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutput<M>> {
    const response = await this.request(`/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) });
    const body: unknown = await response.json().catch(() => null);
    if (response.status === 404 && apiErrorOf(body)?.message.startsWith('no API method')) {
      throw new CliError(`the switchboard on ${this.where} does not know "${method}": it is an older version (restart it)`, EXIT_FAILED);
    }
    if (!response.ok) throw failure(body, response.status);
    return API[method].output.parse(body) as ApiOutput<M>;
  }

  /** A GET on the control port (export, the live stream); the body is the caller's to read. */
  get(path: string, signal?: AbortSignal): Promise<Response> {
    return this.send(path, { method: 'GET', ...(signal ? { signal } : {}) });
  }

  /** A streamed POST (import): the body is read as it is sent, never held whole. */
  post(path: string, body: ReadableStream<Uint8Array>, contentType: string): Promise<Response> {
    return this.send(path, { method: 'POST', headers: { 'content-type': contentType }, body, duplex: 'half' } as RequestInit);
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    const response = await this.request(path, init);
    if (!response.ok) throw failure(await response.json().catch(() => null), response.status);
    return response;
  }

  /**
   * The live stream the UI uses (`GET /api/live`, Server-Sent Events). Resolves once the
   * stream is open, so nothing delivered after that is missed; `done` settles when it ends.
   */
  async live(onMessage: (message: LiveMessage) => void, signal?: AbortSignal): Promise<{ done: Promise<void> }> {
    const response = await this.get('/api/live', signal);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const done = (async () => {
      let pending = '';
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) return;
        pending += value;
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const frame = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          if (data !== '') onMessage(JSON.parse(data) as LiveMessage);
        }
      }
    })();
    return { done };
  }

  /**
   * The instance at `base` proves it knows the data dir's identity key, bound to the port it
   * listens on — before any request carries the token. Asked once per client.
   */
  private checkIdentity(): Promise<void> {
    this.identified ??= this.proveIdentity();
    return this.identified;
  }

  private async proveIdentity(): Promise<void> {
    const { dataDir } = this.identity!;
    const keyPath = join(dataDir, IDENTITY_KEY_FILE);
    const key = (await readFile(keyPath, 'utf8').catch(() => '')).trim();
    const trustAnyway = `pass --control-url ${this.base.origin} to talk to it anyway`;
    if (key === '') {
      // No key: no instance of this version ever ran on this data dir, or it is an older one.
      await this.fetchOrExplain('/healthz', {});
      throw new CliError(
        `cannot check that ${this.where} is the switchboard of ${dataDir}: ${keyPath} is missing (an older switchboard? restart it) — the control token was not sent; ${trustAnyway}`,
        EXIT_USAGE,
      );
    }
    const nonce = randomBytes(32).toString('base64url');
    const response = await this.fetchOrExplain(`/identity?nonce=${nonce}`, { method: 'GET' });
    const body = (await response.json().catch(() => null)) as { proof?: unknown } | null;
    const expected = Buffer.from(identityProof(key, Number(this.base.port || (this.base.protocol === 'https:' ? 443 : 80)), nonce), 'hex');
    const proof = typeof body?.proof === 'string' && /^[0-9a-f]{64}$/.test(body.proof) ? Buffer.from(body.proof, 'hex') : null;
    if (!response.ok || proof === null || !timingSafeEqual(proof, expected)) {
      throw new CliError(
        `what answers on ${this.where} is not the switchboard of ${dataDir} (it could not prove it knows ${keyPath}), so the control token was not sent — is another program, or another account's switchboard, on that port? Start yours with: ${this.startCommand}, or ${trustAnyway}`,
        EXIT_USAGE,
      );
    }
  }

  private async request(path: string, init: RequestInit): Promise<Response> {
    if (this.identity && this.token) await this.checkIdentity();
    const response = await this.fetchOrExplain(path, {
      ...init,
      headers: { ...(init.headers as Record<string, string> | undefined), ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
    });
    if (response.status === 401) {
      await response.body?.cancel();
      throw new CliError(
        this.token
          ? `the switchboard on ${this.where} refused the control token — use the one in its data dir (--data-dir DIR), --token or SWITCHBOARD_TOKEN`
          : `no control token for ${this.where} — pass --token, set SWITCHBOARD_TOKEN, or point --data-dir at its data dir`,
        EXIT_USAGE,
      );
    }
    return response;
  }

  /** fetch, with "nothing is listening there" said in one line. */
  private async fetchOrExplain(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(new URL(path, this.base), init);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      const code = ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
      if (code === undefined || NOT_ANSWERING.has(code)) {
        throw new CliError(`no switchboard is answering on ${this.where} — start one with: ${this.startCommand}`, EXIT_USAGE, undefined, true);
      }
      throw new CliError(`cannot reach ${this.where}: ${code}`, EXIT_USAGE);
    }
  }
}

function apiErrorOf(body: unknown): { code: string; message: string; hint?: string } | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    return error as { code: string; message: string; hint?: string };
  }
  return undefined;
}

/** An error the server reported: the operation failed (exit 1). */
function failure(body: unknown, status: number): CliError {
  const error = apiErrorOf(body);
  return new CliError(error?.message ?? `the control API answered HTTP ${status}`, EXIT_FAILED, error?.hint);
}

export async function connect(flags: ClientFlags): Promise<ControlClient> {
  const dataDir = resolveDataDir(flags.dataDir);
  const base = await controlUrl(flags.controlUrl, dataDir);
  const token = flags.token || process.env.SWITCHBOARD_TOKEN || (await readFile(join(dataDir, TOKEN_FILE), 'utf8').catch(() => '')).trim() || undefined;
  const startCommand = flags.dataDir !== undefined ? `switchboard serve --data-dir ${flags.dataDir}` : 'switchboard serve';
  return new ControlClient(base, token, startCommand, flags.controlUrl !== undefined ? undefined : { dataDir });
}

async function controlUrl(flag: string | undefined, dataDir: string): Promise<URL> {
  if (flag !== undefined) return parseControlUrl(flag, '--control-url');
  const recorded = (await readFile(join(dataDir, CONTROL_URL_FILE), 'utf8').catch(() => '')).trim();
  if (recorded) return parseControlUrl(recorded, join(dataDir, CONTROL_URL_FILE));
  const config = await readFile(join(dataDir, 'config.json'), 'utf8')
    .then((text) => JSON.parse(text) as { control?: { host?: unknown; port?: unknown } })
    .catch(() => undefined);
  const host = typeof config?.control?.host === 'string' ? config.control.host : DEFAULT_CONTROL.host;
  const port = typeof config?.control?.port === 'number' ? config.control.port : DEFAULT_CONTROL.port;
  return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}`);
}

function parseControlUrl(value: string, from: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${from}: "${value}" is not a URL`, 'e.g. --control-url http://127.0.0.1:7778');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`${from}: the control URL must be http(s), got ${url.protocol}`);
  return url;
}
