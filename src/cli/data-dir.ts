import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** `--data-dir`, else `$SWITCHBOARD_HOME`, else `~/.switchboard` (DESIGN §2): serve and the client verbs agree. */
export function resolveDataDir(flag: string | undefined): string {
  return resolve(flag ?? process.env.SWITCHBOARD_HOME ?? join(homedir(), '.switchboard'));
}

/** Where `serve` records the control URL it actually listens on, for the client verbs. */
export const CONTROL_URL_FILE = 'control-url';
