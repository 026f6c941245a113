import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { SecretVault } from '../core/config.js';
import { SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

/**
 * Secrets typed into the desktop UI, kept encrypted by the OS (Electron's `safeStorage`: the
 * macOS Keychain, Windows DPAPI, libsecret/KWallet on Linux). config.json only holds
 * `{ "stored": "<id>" }`; this file holds `{ id: ciphertext }`.
 *
 * Defends against: secrets lying in plain text in config.json, in backups and dotfile repos.
 * It does not defend against code running as the same user while the keychain is unlocked, and
 * on Linux with the `basic_text` backend (no keyring found) not even against reading the file:
 * Chromium then encrypts with a fixed, public key, so we say so loudly.
 */

/** The part of Electron's `safeStorage` this uses; injected so Node tests can supply their own. */
export interface Encryptor {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only. */
  getSelectedStorageBackend(): string;
}

const SecretsFileSchema = z.object({
  version: z.literal(1),
  secrets: z.record(z.string(), z.string().describe('base64 of safeStorage ciphertext')),
});

export const SECRETS_FILE = 'secrets.json';

export interface SafeStorageVault extends SecretVault {
  put(value: string): string;
  /** Why the stored secrets are weaker than they look, when they are (Linux `basic_text`). */
  readonly warning: string | null;
}

export interface VaultOptions {
  dataDir: string;
  encryptor: Encryptor;
  platform: NodeJS.Platform;
  logger: Logger;
}

export function createSafeStorageVault({ dataDir, encryptor, platform, logger }: VaultOptions): SafeStorageVault {
  const file = join(dataDir, SECRETS_FILE);
  const secrets = readSecretsFile(file);
  const warning =
    platform === 'linux' && encryptor.getSelectedStorageBackend() === 'basic_text'
      ? `no OS keychain was found (safeStorage backend "basic_text"), so secrets entered in the app are encrypted with a fixed key: anyone who can read ${file} can decrypt them. Install and unlock GNOME Keyring or KWallet, or use { "env": "NAME" } secret sources`
      : null;
  if (warning) logger.warn(warning);

  return {
    warning,
    get(id) {
      const blob = secrets.get(id);
      if (blob === undefined) return undefined;
      try {
        return encryptor.decryptString(Buffer.from(blob, 'base64'));
      } catch (error) {
        // Typically a keychain that changed or is locked; the provider shows "missing".
        logger.warn(`stored secret ${id} cannot be decrypted (${(error as Error).message})`);
        return undefined;
      }
    },
    put(value) {
      if (!encryptor.isEncryptionAvailable()) {
        throw new SwitchboardError('storage_unavailable', 'secrets cannot be encrypted on this system: no OS keychain is available', {
          hint: 'set the secret in an environment variable and use { "env": "NAME" } instead',
        });
      }
      const id = randomUUID();
      secrets.set(id, encryptor.encryptString(value).toString('base64'));
      writeSecretsFile(file, secrets);
      return id;
    },
  };
}

function readSecretsFile(file: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new SwitchboardError('config_invalid', `${file} cannot be read (${(error as Error).message})`, { cause: error });
  }
  let parsed: z.infer<typeof SecretsFileSchema>;
  try {
    parsed = SecretsFileSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new SwitchboardError('config_invalid', `${file} is damaged (${(error as Error).message.split('\n')[0]})`, {
      hint: `move it away and enter the secrets again in the app; providers using { "stored": … } will show the secret as missing`,
      cause: error,
    });
  }
  return new Map(Object.entries(parsed.secrets));
}

/** Atomic (temp file + rename beside it) and readable by the user only. */
function writeSecretsFile(file: string, secrets: Map<string, string>): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  const body: z.infer<typeof SecretsFileSchema> = { version: 1, secrets: Object.fromEntries(secrets) };
  writeFileSync(temp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}
