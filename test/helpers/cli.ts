import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'switchboard.js');

export interface Serve {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  receiver: string;
  control: string;
  exited: Promise<number | null>;
}

/** Spawns `switchboard serve` and resolves once the banner (or the JSON `ready` record) is printed. */
export function spawnServe(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Serve> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { ...process.env, SWITCHBOARD_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`));
    }, timeoutMs);
    const check = () => {
      // The text banner, or the `ready` record of --log-format json.
      const receiver = (/receiver\s+(http:\/\/\S+)/.exec(out) ?? /"receiver_url":"(http:\/\/[^"]+)"/.exec(out))?.[1];
      const control = (/MCP\s+(http:\/\/\S+)\/mcp/.exec(out) ?? /"control_url":"(http:\/\/[^"]+)"/.exec(out))?.[1];
      if (receiver && control) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve({ child, stdout: () => out, stderr: () => err, receiver, control, exited });
      }
    };
    child.stdout!.on('data', check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before starting\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

/** Runs `switchboard serve` expecting it to fail at start; returns its exit code and output. */
export function serveFailure(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one client verb of the real binary (`switchboard events …`) to completion. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, SWITCHBOARD_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Resolves once `read()` matches (polling), or rejects with what was read. */
export async function waitForOutput(read: () => string, pattern: RegExp | ((text: string) => boolean), timeoutMs = 15_000): Promise<string> {
  const matches = typeof pattern === 'function' ? pattern : (text: string) => pattern.test(text);
  const deadline = Date.now() + timeoutMs;
  while (!matches(read())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)} in:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return read();
}
