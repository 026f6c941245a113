import { mkdtemp, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings, loadConfigFile, missingSecretAdvice, parseConfig, resolveSecrets, writeConfigFile } from '../../src/core/config.js';
import { SwitchboardError } from '../../src/core/errors.js';

function configError(input: unknown): string {
  try {
    parseConfig(input, 'config.json');
  } catch (error) {
    expect(error).toBeInstanceOf(SwitchboardError);
    expect((error as SwitchboardError).code).toBe('config_invalid');
    return (error as Error).message;
  }
  throw new Error('expected the config to be refused');
}

describe('config', () => {
  it('fills every default from an empty file', () => {
    const config = parseConfig({});
    expect(config.receiver).toEqual({ host: '127.0.0.1', port: 7777, max_body_bytes: 26_214_400 });
    expect(config.control).toEqual({ host: '127.0.0.1', port: 7778 });
    expect(config.replay).toMatchObject({ allow_hosts: ['localhost', '127.0.0.1', '::1'], timeout_ms: 10_000, resign: true });
    expect(config.retention).toEqual({ max_age_days: 30, max_rows: 500_000, max_rejections: 50_000 });
    expect(config.database).toEqual({ url: null });
    expect(config.providers).toEqual([]);
  });

  it('accepts the example of DESIGN §3', () => {
    const config = parseConfig({
      receiver: { host: '127.0.0.1', port: 7777, max_body_bytes: 26214400, public_url: 'https://example.ngrok.app' },
      control: { host: '127.0.0.1', port: 7778 },
      providers: [
        { name: 'github', kind: 'github', secrets: [{ env: 'GITHUB_WEBHOOK_SECRET' }] },
        { name: 'stripe', kind: 'stripe', secrets: [{ value: 'whsec_x' }], tolerance_s: 300 },
        { name: 'slack', kind: 'slack', secrets: [{ env: 'SLACK_SIGNING_SECRET' }] },
        { name: 'dockerhub', kind: 'token', secrets: [{ env: 'DOCKERHUB_TOKEN' }] },
        { name: 'homelab', kind: 'open' },
        { name: 'deploys', kind: 'redis-pubsub', url: { env: 'REDIS_URL' }, channels: ['deploys'] },
        { name: 'jobs', kind: 'redis-stream', url: { value: 'redis://127.0.0.1:6379' }, stream: 'jobs', group: 'switchboard' },
      ],
      replay: { default_target: 'http://localhost:3000/webhooks', allow_hosts: ['localhost', '127.0.0.1', '::1'], timeout_ms: 10000, resign: true },
      retention: { max_age_days: 30, max_rows: 500000 },
      database: { url: null },
    });
    expect(config.providers.map((provider) => provider.name)).toEqual(['github', 'stripe', 'slack', 'dockerhub', 'homelab', 'deploys', 'jobs']);
    expect(config.providers.every((provider) => provider.enabled)).toBe(true);
  });

  it('names the JSON path and what was expected', () => {
    expect(configError({ receiver: { port: 'eighty' } })).toMatch(/receiver\.port: .*number/);
    expect(configError({ providers: [{ name: 'Git Hub', kind: 'github' }] })).toMatch(/providers\[0\]\.name: a lowercase name/);
    expect(configError({ providers: [{ name: 'x', kind: 'carrier-pigeon' }] })).toMatch(/providers\[0\]\.kind/);
    expect(configError({ providers: [{ name: 'x', kind: 'github', secrets: [{ file: '/etc/x' }] }] })).toMatch(/providers\[0\]\.secrets\[0\]/);
    expect(configError({ control: { host: '0.0.0.0' } })).toMatch(/control\.host: a loopback address/);
    expect(configError({ recever: {} })).toMatch(/recever/);
  });

  it('refuses duplicate provider names, pointing at the second', () => {
    const message = configError({ providers: [{ name: 'a', kind: 'open' }, { name: 'a', kind: 'open' }] });
    expect(message).toMatch(/providers\[1\]\.name: duplicate provider name "a" \(already used by providers\[0\]\)/);
  });

  it('resolves several secret sources for rotation and reports the missing ones by name only', () => {
    const resolution = resolveSecrets([{ env: 'NEW' }, { env: 'GONE' }, { value: 'inline-old' }], { NEW: 'new-secret' });
    expect(resolution.values).toEqual(['new-secret', 'inline-old']);
    expect(resolution.missing).toEqual(['env GONE']);
  });

  it('warns about inline secrets without printing them', () => {
    const warnings = configWarnings(parseConfig({ providers: [{ name: 's', kind: 'stripe', secrets: [{ value: 'whsec_very_secret' }] }] }));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/env/);
    expect(warnings[0]).not.toContain('whsec_very_secret');
  });

  it('reads a missing file as the empty config and a broken file as a clear error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-config-'));
    expect((await loadConfigFile(join(dir, 'none.json'))).existed).toBe(false);
    await writeFile(join(dir, 'broken.json'), '{ "providers": [ }');
    await expect(loadConfigFile(join(dir, 'broken.json'))).rejects.toThrow(/broken\.json: not valid JSON/);
  });

  it('writes atomically (no temp file left) and refuses to write an invalid config', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-config-'));
    const path = join(dir, 'config.json');
    await writeConfigFile(path, { providers: [{ name: 'homelab', kind: 'open' }] });
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ providers: [{ name: 'homelab', kind: 'open' }] });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await expect(writeConfigFile(path, { providers: [{ name: 'BAD', kind: 'open' }] })).rejects.toThrow(/providers\[0\]\.name/);
    expect(JSON.parse(await readFile(path, 'utf8')).providers[0].name).toBe('homelab');
    expect(await readdir(dir)).toEqual(['config.json']);
  });

  it('says what to do about a missing secret, naming every source and never a value', () => {
    expect(missingSecretAdvice([{ env: 'A' }, { env: 'B' }], { vault: false })).toBe(
      'set A or B in the environment switchboard starts with and restart it, or store the secret in config.json / the UI',
    );
    expect(missingSecretAdvice([{ stored: 'gh-1' }], { vault: true })).toBe(
      "the secret stored as gh-1 is no longer in this machine's keychain: enter it again on the Providers screen",
    );
    expect(missingSecretAdvice([{ stored: 'gh-1' }], { vault: false })).toMatch(/kept by the desktop app, which switchboard serve cannot read/);
    expect(missingSecretAdvice([{ env: 'REDIS_URL' }], { vault: false, what: 'URL' })).toMatch(/store the URL in config\.json/);
    expect(missingSecretAdvice([], { vault: false })).toBe('add a secret to this provider in config.json or on the Providers screen');
  });
});
