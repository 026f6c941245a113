import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiHandlers } from '../../src/core/api/handlers.js';
import { isSwitchboardError } from '../../src/core/errors.js';
import { createSwitchboard } from '../../src/core/switchboard.js';
import { SECRETS_FILE, createSafeStorageVault, type Encryptor } from '../../src/main/secrets.js';
import { TEST_TOKEN, memoryLogger } from '../helpers/core.js';

/**
 * Stands in for Electron's safeStorage: real AES-256-GCM under a key only this object holds,
 * like the OS keychain's key. Swapping the key mimics a changed or reset keychain.
 */
function keychainEncryptor(options: { available?: boolean; backend?: string } = {}): Encryptor & { calls: string[]; rotate(): void } {
  let key = randomBytes(32);
  const calls: string[] = [];
  return {
    calls,
    rotate: () => (key = randomBytes(32)),
    isEncryptionAvailable: () => options.available ?? true,
    encryptString(plainText) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plainText, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decryptString(encrypted) {
      const decipher = createDecipheriv('aes-256-gcm', key, encrypted.subarray(0, 12));
      decipher.setAuthTag(encrypted.subarray(12, 28));
      return Buffer.concat([decipher.update(encrypted.subarray(28)), decipher.final()]).toString('utf8');
    },
    getSelectedStorageBackend() {
      calls.push('getSelectedStorageBackend');
      return options.backend ?? 'gnome_libsecret';
    },
  };
}

const dirs: string[] = [];
async function dataDir() {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-vault-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const SECRET = 'whsec_the-value-nobody-may-read-0123456789';

describe('the safeStorage vault', () => {
  it('round-trips a secret, also through a fresh vault reading the file', async () => {
    const dir = await dataDir();
    const encryptor = keychainEncryptor();
    const vault = createSafeStorageVault({ dataDir: dir, encryptor, platform: 'darwin', logger: memoryLogger() });
    const id = vault.put(SECRET);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(vault.get(id)).toBe(SECRET);
    const reopened = createSafeStorageVault({ dataDir: dir, encryptor, platform: 'darwin', logger: memoryLogger() });
    expect(reopened.get(id)).toBe(SECRET);
    expect(reopened.get('no-such-id')).toBeUndefined();
  });

  it('keeps only ciphertext on disk, readable by the user alone', async () => {
    const dir = await dataDir();
    const vault = createSafeStorageVault({ dataDir: dir, encryptor: keychainEncryptor(), platform: 'linux', logger: memoryLogger() });
    const id = vault.put(SECRET);
    const text = await readFile(join(dir, SECRETS_FILE), 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(JSON.parse(text)).toEqual({ version: 1, secrets: { [id]: expect.any(String) } });
    if (process.platform !== 'win32') expect((await stat(join(dir, SECRETS_FILE))).mode & 0o777).toBe(0o600);
  });

  it('warns on Linux when the backend is basic_text (a fixed key, no keychain)', async () => {
    const logger = memoryLogger();
    const vault = createSafeStorageVault({ dataDir: await dataDir(), encryptor: keychainEncryptor({ backend: 'basic_text' }), platform: 'linux', logger });
    expect(vault.warning).toMatch(/basic_text/);
    expect(vault.warning).toMatch(/GNOME Keyring or KWallet/);
    expect(logger.lines).toEqual([`warn ${vault.warning}`]);

    const keyring = createSafeStorageVault({ dataDir: await dataDir(), encryptor: keychainEncryptor({ backend: 'gnome_libsecret' }), platform: 'linux', logger: memoryLogger() });
    expect(keyring.warning).toBeNull();
  });

  it('does not ask for the storage backend off Linux (Electron has it on Linux only)', async () => {
    const encryptor = keychainEncryptor({ backend: 'basic_text' });
    const vault = createSafeStorageVault({ dataDir: await dataDir(), encryptor, platform: 'win32', logger: memoryLogger() });
    expect(vault.warning).toBeNull();
    expect(encryptor.calls).toEqual([]);
  });

  it('refuses to store when the OS cannot encrypt, and writes nothing', async () => {
    const dir = await dataDir();
    const vault = createSafeStorageVault({ dataDir: dir, encryptor: keychainEncryptor({ available: false }), platform: 'linux', logger: memoryLogger() });
    let error: unknown;
    try {
      vault.put(SECRET);
    } catch (caught) {
      error = caught;
    }
    expect(isSwitchboardError(error) && error.code).toBe('storage_unavailable');
    expect(isSwitchboardError(error) && error.hint).toContain('"env"');
    await expect(stat(join(dir, SECRETS_FILE))).rejects.toThrow();
  });

  it('treats a secret it can no longer decrypt as missing, and logs its id, not its value', async () => {
    const dir = await dataDir();
    const encryptor = keychainEncryptor();
    const logger = memoryLogger();
    const vault = createSafeStorageVault({ dataDir: dir, encryptor, platform: 'darwin', logger });
    const id = vault.put(SECRET);
    encryptor.rotate();
    expect(vault.get(id)).toBeUndefined();
    expect(logger.lines.join('\n')).toContain(id);
    expect(logger.lines.join('\n')).not.toContain(SECRET);
  });

  it('names a damaged secrets file and how to recover', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, SECRETS_FILE), '{"version": 2, "secrets": []}');
    let error: unknown;
    try {
      createSafeStorageVault({ dataDir: dir, encryptor: keychainEncryptor(), platform: 'darwin', logger: memoryLogger() });
    } catch (caught) {
      error = caught;
    }
    expect(isSwitchboardError(error) && error.code).toBe('config_invalid');
    expect((error as Error).message).toContain(SECRETS_FILE);
    expect(isSwitchboardError(error) && error.hint).toMatch(/move it away/);
  });
});

describe('a secret typed into the UI, with the desktop vault', () => {
  it('is kept as { "stored": id } in config.json, encrypted in the vault, and verifies deliveries', async () => {
    const dir = await dataDir();
    const logger = memoryLogger();
    const vault = createSafeStorageVault({ dataDir: dir, encryptor: keychainEncryptor(), platform: 'darwin', logger });
    const sb = createSwitchboard({ dataDir: dir, databaseUrl: 'memory://', receiverPort: 0, controlPort: 0, token: TEST_TOKEN, vault, logger, rendererDir: null, env: {} });
    await sb.start();
    try {
      const api = createApiHandlers(sb);
      expect((await api.listProviders({})).secret_storage).toBe('vault');
      await api.addProvider({ provider: { name: 'github', kind: 'github', secrets: [{ value: SECRET }] } });

      const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
      const [source] = config.providers[0].secrets;
      expect(source).toEqual({ stored: expect.any(String) });
      expect(vault.get(source.stored)).toBe(SECRET);
      for (const file of ['config.json', SECRETS_FILE]) expect(await readFile(join(dir, file), 'utf8')).not.toContain(SECRET);

      const body = JSON.stringify({ zen: 'Keep it logically awesome.' });
      const response = await fetch(`${sb.url.receiver}/webhooks/github`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': 'vault-1', 'x-hub-signature-256': await githubSign(SECRET, body) },
      });
      expect(response.status).toBe(200);
      expect(JSON.stringify(await api.listProviders({}))).not.toContain(SECRET);
      expect(logger.lines.join('\n')).not.toContain(SECRET);
    } finally {
      await sb.stop();
    }
  });
});
