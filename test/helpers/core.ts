import { Blob as NodeBlob } from 'node:buffer';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigInput } from '../../src/core/config.js';
import type { Logger } from '../../src/core/logger.js';
import { createSwitchboard, type Switchboard, type SwitchboardOptions } from '../../src/core/switchboard.js';

export const TEST_TOKEN = 'test-control-token-0123456789abcdef0123456789';

/** `promise`, or a rejection saying `${what} hung` after `ms`: a hang fails the test with its name, not the file's timeout. */
export function withDeadline<T>(promise: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} hung`)), ms)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** A logger that keeps every line, so tests can scan logs for secrets. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (message) => lines.push(`info ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
    error: (message) => lines.push(`error ${message}`),
  };
}

export interface TestSwitchboard {
  sb: Switchboard;
  logger: ReturnType<typeof memoryLogger>;
  dataDir: string;
  /** POST raw bytes to the receiver. */
  deliver(path: string, body: string | Buffer, headers?: Record<string, string>): Promise<{ status: number; json: any; text: string }>;
  close(): Promise<void>;
}

/**
 * A real switchboard on ports 0 with an in-memory PGlite. Creating PGlite takes seconds, so
 * test files start one in beforeAll and share it.
 */
export async function startTestSwitchboard(config: ConfigInput, options: Partial<SwitchboardOptions> = {}): Promise<TestSwitchboard> {
  // Renderer tests run a core under jsdom, whose global Blob has no arrayBuffer(); PGlite builds
  // its extension bundles (pg_trgm) with the global Blob.
  if (typeof Blob.prototype.arrayBuffer !== 'function') globalThis.Blob = NodeBlob as typeof Blob;
  const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-test-'));
  const logger = memoryLogger();
  const sb = createSwitchboard({
    dataDir,
    config: { ...config, receiver: { port: 0, ...config.receiver }, control: { port: 0, ...config.control } },
    databaseUrl: 'memory://',
    token: TEST_TOKEN,
    logger,
    rendererDir: null,
    env: {},
    ...options,
  });
  await sb.start();
  return {
    sb,
    logger,
    dataDir,
    async deliver(path, body, headers = {}) {
      const response = await fetch(`${sb.url.receiver}${path}`, { method: 'POST', body, headers });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, json, text };
    },
    async close() {
      await sb.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
