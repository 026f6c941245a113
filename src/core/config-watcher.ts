import { readFile } from 'node:fs/promises';
import { configWarnings, EMPTY_CONFIG_HINT, parseConfig, restartRequiredChanges, type Config } from './config.js';
import { watchPath } from './file-watch.js';
import type { Logger } from './logger.js';

/**
 * Follows config.json on disk so that hand edits apply live (DESIGN §3), whoever wrote the file
 * last and however they wrote it (src/core/file-watch.ts says how the file is followed).
 *
 * Every reload that changes something is logged in one line naming what changed (never a value:
 * secrets are "secrets changed"); every refusal in one line naming the JSON path, after which the
 * previous configuration keeps running. A deleted file keeps the running configuration too: a
 * `git stash` or an editor's delete-then-write must not drop every provider.
 */

export interface ConfigWatcherOptions {
  path: string;
  logger: Logger;
  current: () => Config;
  /** Applies a changed configuration; returns warnings to log after the reload line. */
  apply: (config: Config) => string[];
  /** Told when an edit is refused (the text and why) and, with null, when the file is valid or gone again. */
  onProblem?: (refused: { text: string | null; reason: string } | null) => void;
}

export interface ConfigWatcher {
  close(): void;
}

type Read = { kind: 'missing' } | { kind: 'refused'; text: string | null; reason: string } | { kind: 'ok'; text: string; config: Config };

export function watchConfigFile(options: ConfigWatcherOptions): ConfigWatcher {
  const { path, logger } = options;
  // What the file was at the last read ('start' before the first), so each state of the file is
  // logged once however often it is seen.
  let state: 'start' | 'missing' | 'refused' | 'ok' = 'start';
  let reportedRefusal: string | undefined;
  // A refusal or a removal is confirmed by a second read: a truncate-then-write or a
  // delete-then-create save can be caught half-way.
  let unconfirmedRefusal: string | null | undefined;
  let unconfirmedMissing = false;
  let closed = false;

  const reload = async () => {
    const read = await readConfig(path);
    if (closed) return;
    if (read.kind === 'missing') {
      unconfirmedRefusal = undefined;
      reportedRefusal = undefined;
      if (state !== 'missing' && state !== 'start' && !unconfirmedMissing) {
        unconfirmedMissing = true;
        watch.recheck();
        return;
      }
      unconfirmedMissing = false;
      if (state === 'refused') options.onProblem?.(null);
      if (state !== 'missing' && state !== 'start') {
        logger.warn(`${path} was removed — keeping the current configuration (a save from the UI writes the file again)`);
      }
      state = 'missing';
      return;
    }
    unconfirmedMissing = false;
    if (read.kind === 'refused') {
      if (unconfirmedRefusal !== read.text) {
        unconfirmedRefusal = read.text;
        watch.recheck();
        return;
      }
      if (state !== 'refused' || reportedRefusal !== read.reason) {
        logger.error(`${path} not applied: ${read.reason} — keeping the previous configuration`);
        options.onProblem?.({ text: read.text, reason: read.reason });
      }
      state = 'refused';
      reportedRefusal = read.reason;
      return;
    }
    // Only a reported problem is "recovered" from: a file that appears with what is already
    // running (the UI's first save creates it) says nothing.
    const recovered = state === 'refused';
    if (state === 'refused') options.onProblem?.(null);
    state = 'ok';
    unconfirmedRefusal = undefined;
    reportedRefusal = undefined;
    const before = options.current();
    const changes = describeChanges(before, read.config);
    if (changes.length === 0) {
      // Our own UI/API saves land here (already applied); say something only after a reported problem.
      if (recovered) logger.info(`${path} reloaded: no changes`);
      return;
    }
    const warnings = options.apply(read.config);
    logger.info(`${path} reloaded: ${changes.join('; ')}`);
    const known = new Set(configWarnings(before));
    for (const warning of [...configWarnings(read.config).filter((warning) => !known.has(warning)), ...warnings]) logger.warn(warning);
  };

  const watch = watchPath(path, reload, { onError: (error) => logger.error(`${path}: reload failed: ${error.message}`) });
  return {
    close() {
      closed = true;
      watch.close();
    },
  };
}

async function readConfig(path: string): Promise<Read> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'refused', text: null, reason: `cannot be read (${code ?? (error as Error).message})` };
  }
  if (text.trim() === '') return { kind: 'refused', text, reason: `the file is empty: ${EMPTY_CONFIG_HINT}` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { kind: 'refused', text, reason: `not valid JSON (${(error as Error).message}); config.json is plain JSON: no comments or trailing commas` };
  }
  try {
    // parseConfig's message starts with its source; the log line names the file already.
    return { kind: 'ok', text, config: parseConfig(json, '') };
  } catch (error) {
    return { kind: 'refused', text, reason: (error as Error).message.replace(/^: /, '') };
  }
}

/**
 * What differs between two configurations, in the words of the file: provider names and the
 * keys that changed, never values (a changed secret is "secrets changed").
 */
export function describeChanges(before: Config, after: Config): string[] {
  const changes: string[] = [];
  const providers: string[] = [];
  const old = new Map(before.providers.map((provider) => [provider.name, provider]));
  const now = new Map(after.providers.map((provider) => [provider.name, provider]));
  for (const [name, provider] of now) {
    const previous = old.get(name);
    if (!previous) {
      providers.push(`+${name}`);
      continue;
    }
    const fields = providerFieldChanges(previous as unknown as Record<string, unknown>, provider as unknown as Record<string, unknown>);
    if (fields.length > 0) providers.push(`${name} (${fields.join(', ')})`);
  }
  for (const name of old.keys()) if (!now.has(name)) providers.push(`-${name}`);
  if (providers.length > 0) changes.push(`providers ${providers.join(', ')}`);
  else if (!same(before.providers.map((provider) => provider.name), after.providers.map((provider) => provider.name))) changes.push('providers reordered');

  const restart = new Set(restartRequiredChanges(before, after));
  for (const section of ['receiver', 'control', 'replay', 'retention', 'database'] as const) {
    const a = before[section] as Record<string, unknown>;
    const b = after[section] as Record<string, unknown>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (same(a[key], b[key])) continue;
      const path = `${section}.${key}`;
      changes.push(restart.has(path) ? `${path} (takes effect after a restart)` : path);
    }
  }
  return changes;
}

const SECRET_FIELDS = new Set(['secrets', 'url', 'public_key']);

function providerFieldChanges(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const fields: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[key], after[key])) continue;
    if (key === 'enabled') fields.push(after.enabled ? 'enabled' : 'disabled');
    else if (key === 'kind') fields.push(`kind ${String(after.kind)}`);
    else fields.push(SECRET_FIELDS.has(key) ? `${key === 'public_key' ? 'public key' : key} changed` : key);
  }
  return fields;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
