import { claudeCommand, mcpJsonSnippet } from '../../shared/connect.js';
import { API, type ApiOutput, type ApiParsedInput, type ProviderInput, type SecretInput, type Settings, type SecretSourceView, type ProviderView, type SwitchboardApi } from '../../shared/api.js';
import { API_METHODS, type ApiMethod } from '../../shared/api-methods.js';
import { REDACTED } from '../../shared/events.js';
import { QUEUE_KINDS } from '../../shared/providers.js';
import { formatPath, readConfigJson, restartRequiredChanges, type Config, type ConfigInput, type SecretSource } from '../config.js';
import { eventNotFound, SwitchboardError } from '../errors.js';
import type { Services } from '../services.js';
import { importStream } from './export-routes.js';
import { forwardTargets } from '../replay/forward-targets.js';
import { toReplayRequest } from '../replay/replay-input.js';
import { encodeBytes, toEventDetail, toWireReplay } from '../wire.js';

/**
 * The one implementation of the UI API (src/shared/api.ts). The HTTP transport (`/api` on the
 * control port) and the Electron IPC handlers both call what `createApiHandlers` returns: it
 * parses every input with the contract's schema, and every output too, so a field that is not
 * in the contract (a secret, say) is stripped before it can reach a transport.
 *
 * Provider and settings edits go to config.json through `sb.updateConfig` (validated, atomic,
 * reloaded live). They start from the file as the user wrote it, not from the parsed config,
 * so an edit in the UI does not fill the file with every default.
 */

type Implementation = { [M in ApiMethod]: (input: ApiParsedInput<M>) => Promise<ApiOutput<M>> };
type RawProvider = Record<string, unknown> & { name?: unknown; kind?: unknown; secrets?: unknown; url?: unknown };
type RawConfig = Record<string, unknown> & { providers?: RawProvider[] };

export function createApiHandlers(sb: Services): SwitchboardApi {
  const implementation = implement(sb);
  const api: Partial<Record<ApiMethod, (input: unknown) => Promise<unknown>>> = {};
  for (const method of API_METHODS) {
    const call = implementation[method] as (input: unknown) => Promise<unknown>;
    api[method] = async (input: unknown) => {
      const parsed = API[method].input.safeParse(input ?? {});
      if (!parsed.success) {
        const detail = parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join('; ');
        throw new SwitchboardError('invalid_argument', `${method}: ${detail}`);
      }
      return API[method].output.parse(await call(parsed.data));
    };
  }
  return api as SwitchboardApi;
}

function implement(sb: Services): Implementation {
  // Config edits read-modify-write config.json: one at a time, or two quick edits lose one.
  let editing: Promise<unknown> = Promise.resolve();
  const serialized = <T>(edit: () => Promise<T>): Promise<T> => {
    const next = editing.then(edit, edit);
    editing = next.catch(() => undefined);
    return next;
  };

  const editProviders = (change: (providers: RawProvider[]) => RawProvider[]) =>
    serialized(async () => {
      const raw = await readRawConfig(sb);
      raw.providers = change(Array.isArray(raw.providers) ? raw.providers : []);
      await sb.updateConfig(raw as ConfigInput);
    });

  return {
    async listEventTypes({ provider }) {
      return { types: await sb.shapes.list(provider) };
    },

    async describeEventType({ provider, event_type, max_fields }) {
      return sb.shapes.describe(provider, event_type, max_fields === undefined ? {} : { maxFields: max_fields });
    },

    async resetEventType({ provider, event_type }) {
      return { reset: await sb.shapes.reset(provider, event_type) };
    },

    async listEvents(input) {
      const page = await sb.store.listEvents(input);
      // The list marks events whose last replay or forward failed.
      const last = await sb.store.lastReplays(page.items.map((event) => event.id));
      // A search's rows carry an excerpt around the match, computed for this page only.
      const snippets = input.search ? await sb.store.searchSnippets(page.items.map((event) => event.id), input.search) : new Map<number, string>();
      const events = page.items.map((event) => {
        const snippet = snippets.get(event.id);
        return { ...event, last_replay: last.get(event.id) ?? null, ...(snippet !== undefined ? { snippet } : {}) };
      });
      return {
        events,
        ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
        ...(page.searched_back_to ? { searched_back_to: page.searched_back_to } : {}),
        ...(page.index_progress ? { index_progress: page.index_progress } : {}),
      };
    },

    async getEvent({ id }) {
      const [record, replays] = await Promise.all([sb.store.getEvent(id), sb.store.listReplays(id)]);
      if (!record) throw eventNotFound(id);
      const notes = await sb.store.shapes.notes(id);
      return { event: toEventDetail(record, await sb.store.attemptLog(record), notes), replays: replays.map(toWireReplay) };
    },

    async replayEvent(input) {
      // The web UI says `ui`; a call that does not say who it is came from a script (docs/ui.md).
      const record = await sb.replays.replay(toReplayRequest(input, input.requested_by ?? 'api'));
      const { copies, idempotency, ...first } = record;
      return { ...toWireReplay(first), ...(copies ? { copies: copies.map(toWireReplay), idempotency: idempotency ?? null } : {}) };
    },

    async prepareReplay(input) {
      const prepared = await sb.replays.prepare(toReplayRequest(input, input.requested_by ?? 'api'));
      const body = encodeBytes(prepared.body);
      const wanted = input.resign ?? sb.config.replay.resign;
      return {
        target_url: prepared.targetUrl,
        headers: prepared.headers,
        payload: body.text,
        payload_encoding: body.encoding,
        resigned: prepared.resigned,
        // Re-signed: only an imported event has a warning (its bytes were never verified here).
        warning: prepared.resigned
          ? prepared.warning
          : wanted
            ? `event ${input.id} cannot be re-signed (its provider is gone, has no secret, or its scheme cannot be re-signed): the command carries no signature`
            : null,
      };
    },

    async listReplays({ event_id }) {
      return { replays: (await sb.store.listReplays(event_id)).map(toWireReplay) };
    },

    async clearEvents() {
      await sb.store.clearEvents();
      return { cleared: true as const };
    },

    async listTestEvents({ provider }) {
      return { test_events: sb.testEvents.list(provider) };
    },

    async sendTestEvent(input) {
      const event = await sb.testEvents.send({
        provider: input.provider,
        ...(input.event_type !== undefined ? { eventType: input.event_type } : {}),
        ...(input.overrides !== undefined ? { overrides: input.overrides } : {}),
        ...(input.payload !== undefined ? { payload: input.payload } : {}),
      });
      return { event };
    },

    async importEvents({ ndjson }) {
      return importStream(sb, [ndjson]);
    },

    async listProviders() {
      return {
        providers: sb.config.providers.map((provider) => providerView(sb, provider.name)),
        secret_storage: sb.options.vault?.put ? ('vault' as const) : ('config-file' as const),
      };
    },

    async addProvider({ provider }) {
      await editProviders((providers) => {
        if (providers.some((existing) => existing.name === provider.name)) {
          throw new SwitchboardError('invalid_argument', `a provider named "${provider.name}" already exists`, {
            hint: 'pick another name; it becomes the route /webhooks/<name>',
          });
        }
        return [...providers, toConfigEntry(sb, provider, undefined)];
      });
      return { provider: providerView(sb, provider.name) };
    },

    async updateProvider({ name, provider }) {
      await editProviders((providers) => {
        const index = providers.findIndex((existing) => existing.name === name);
        if (index < 0) throw notFound(name);
        if (provider.name !== name && providers.some((existing) => existing.name === provider.name)) {
          throw new SwitchboardError('invalid_argument', `a provider named "${provider.name}" already exists`);
        }
        return providers.map((existing, i) => (i === index ? toConfigEntry(sb, provider, existing) : existing));
      });
      return { provider: providerView(sb, provider.name) };
    },

    async removeProvider({ name }) {
      await editProviders((providers) => {
        if (!providers.some((existing) => existing.name === name)) throw notFound(name);
        return providers.filter((existing) => existing.name !== name);
      });
      return { removed: name };
    },

    async setProviderEnabled({ name, enabled }) {
      await editProviders((providers) => {
        if (!providers.some((existing) => existing.name === name)) throw notFound(name);
        return providers.map((existing) => {
          if (existing.name !== name) return existing;
          const { enabled: _previous, ...rest } = existing;
          return enabled ? rest : { ...rest, enabled: false };
        });
      });
      return { provider: providerView(sb, name) };
    },

    async listRejections(input) {
      const page = await sb.store.listRejections(input);
      return { rejections: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
    },

    async getActivity() {
      const activity = await sb.store.activity(sb.config.providers.map((provider) => provider.name));
      return activity;
    },

    async getSettings() {
      return settingsOf(sb);
    },

    async updateSettings(input) {
      const before = sb.config;
      if (input.database?.url?.includes(REDACTED)) {
        throw new SwitchboardError('invalid_argument', 'database.url: type the full URL, including its password', {
          hint: 'the URL shown in Settings has its password hidden',
        });
      }
      await serialized(async () => {
        const raw = await readRawConfig(sb);
        const section = (key: string): Record<string, unknown> => {
          const current = raw[key];
          const copy = current && typeof current === 'object' && !Array.isArray(current) ? { ...(current as Record<string, unknown>) } : {};
          raw[key] = copy;
          return copy;
        };
        const assign = (key: string, values: Record<string, unknown> | undefined) => {
          if (!values) return;
          const target = section(key);
          for (const [field, value] of Object.entries(values)) {
            if (value === undefined) continue;
            // null removes an optional setting (public_url, default_target) rather than storing null.
            if (value === null && field !== 'url') delete target[field];
            else target[field] = value;
          }
        };
        assign('receiver', input.receiver);
        assign('control', input.control);
        assign('replay', input.replay);
        assign('retention', input.retention);
        assign('database', input.database);
        await sb.updateConfig(raw as ConfigInput);
      });
      const after = sb.config;
      return { settings: settingsOf(sb), restart_required: restartRequiredChanges(before, after) };
    },

    async listSuites() {
      return { suites: await sb.suites.list() };
    },

    async getSuite({ name }) {
      return sb.suites.get(name);
    },

    async saveSuite(input) {
      return sb.suites.save(input);
    },

    async deleteSuite({ name }) {
      await sb.suites.delete(name);
      return { deleted: name };
    },

    async runSuite(input) {
      const { run } = await sb.suites.start(input.name, {
        ...(input.target_url !== undefined ? { targetUrl: input.target_url } : {}),
        ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
        ...(input.accept !== undefined ? { accept: input.accept } : {}),
        ...(input.chaos !== undefined ? { chaos: input.chaos } : {}),
        requestedBy: input.requested_by ?? 'ui',
      });
      return { run };
    },

    async listSuiteRuns({ name }) {
      return { runs: await sb.suites.runs(name) };
    },

    async getSuiteRun(input) {
      return sb.suites.getRun(input.id, { cases: input.cases, diffs: input.diffs, ...(input.case !== undefined ? { position: input.case } : {}) });
    },

    async acceptSuiteRun({ id }) {
      return sb.suites.accept(id);
    },

    async exportSuite({ name }) {
      return sb.suites.exportFile(name);
    },

    async importSuite({ ndjson, replace }) {
      return sb.suites.importFile(ndjson, { replace });
    },

    async getServerInfo() {
      const { url, token, config } = sb;
      return {
        version: sb.version,
        receiver_url: url.receiver,
        public_url: config.receiver.public_url ?? null,
        control_url: url.control,
        mcp_url: url.mcp,
        token,
        claude_command: claudeCommand(url.mcp, token),
        mcp_json: mcpJsonSnippet(url.mcp, token),
        mcp_sessions: sb.mcpSessionCount,
        data_dir: sb.options.dataDir,
        mcp_tools: [...sb.mcpToolNames],
        config_problem: sb.configProblem,
      };
    },
  };
}

function notFound(name: string): SwitchboardError {
  return new SwitchboardError('not_found', `there is no provider named "${name}"`);
}

/** config.json as the user wrote it (or the in-memory config of an embedded/test switchboard). */
async function readRawConfig(sb: Services): Promise<RawConfig> {
  if (sb.options.config !== undefined) return structuredClone(sb.config) as unknown as RawConfig;
  const value = await readConfigJson(sb.configPath);
  if (value === undefined) return {};
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as RawConfig;
  throw new SwitchboardError('config_invalid', `${sb.configPath} is not a JSON object`, {
    hint: 'fix the file by hand first; the UI will not overwrite it',
  });
}

const isQueueKind = (kind: string): boolean => (QUEUE_KINDS as readonly string[]).includes(kind);

/**
 * A provider as the UI submitted it → its config.json entry. Secrets are write-only: a new
 * value goes to the desktop vault when there is one (else into the file, mode 0600), and
 * `{ keep: i }` reuses the existing source so editing never needs the old secret back.
 */
function toConfigEntry(sb: Services, input: ProviderInput, existing: RawProvider | undefined): RawProvider {
  const existingSecrets = Array.isArray(existing?.secrets) ? (existing.secrets as unknown[]) : [];
  const toSource = (secret: SecretInput, keep: (index: number) => unknown, where: string): unknown => {
    if ('env' in secret) return { env: secret.env };
    if ('value' in secret) {
      const vault = sb.options.vault;
      return vault?.put ? { stored: vault.put(secret.value) } : { value: secret.value };
    }
    const kept = keep(secret.keep);
    if (kept === undefined) throw new SwitchboardError('invalid_argument', `${where}: there is no existing secret to keep`);
    return kept;
  };

  const entry: RawProvider = { name: input.name, kind: input.kind };
  const enabled = input.enabled ?? (existing?.enabled as boolean | undefined) ?? true;
  if (!enabled) entry.enabled = false;
  if (input.forward_to?.length) entry.forward_to = input.forward_to;
  // Forward rules with chaos are written in the file; the form does not show them, an edit keeps them.
  if (Array.isArray(existing?.forward) && existing.forward.length > 0) entry.forward = existing.forward;

  if (isQueueKind(input.kind)) {
    const url =
      input.url !== undefined
        ? toSource(input.url, () => existing?.url, 'url')
        : existing?.url;
    if (url !== undefined) entry.url = url;
    if (input.kind === 'redis-pubsub') {
      if (input.channels?.length) entry.channels = input.channels;
      if (input.patterns?.length) entry.patterns = input.patterns;
    } else {
      if (input.stream) entry.stream = input.stream;
      if (input.group) entry.group = input.group;
      // Settings the form does not show survive an edit.
      if (existing?.kind === input.kind) {
        for (const key of ['consumer', 'max_deliveries', 'claim_idle_ms']) if (existing[key] !== undefined) entry[key] = existing[key];
      }
    }
    if (input.type_field) entry.type_field = input.type_field;
    return entry;
  }

  const secrets =
    input.secrets !== undefined
      ? input.secrets.map((secret, i) => toSource(secret, (index) => existingSecrets[index], `secrets[${i}]`))
      : existingSecrets;
  if (secrets.length > 0) entry.secrets = secrets;
  if (input.tolerance_s !== undefined) entry.tolerance_s = input.tolerance_s;
  if (input.public_key) entry.public_key = input.public_key;
  const answer = input.answer ?? (Array.isArray(existing?.answer) ? existing.answer : []);
  if (answer.length > 0) entry.answer = answer;
  return entry;
}

function viewSource(sb: Services, source: SecretSource): SecretSourceView {
  if ('env' in source) return { source: 'env', env: source.env, present: sb.providers.resolveSecret(source) !== undefined };
  if ('stored' in source) return { source: 'stored', present: sb.providers.resolveSecret(source) !== undefined };
  return { source: 'value' };
}

function providerView(sb: Services, name: string): ProviderView {
  const config = sb.config.providers.find((provider) => provider.name === name);
  const status = sb.providers.statuses().find((provider) => provider.name === name);
  if (!config || !status) throw notFound(name);
  const publicBase = sb.config.receiver.public_url;
  const base = { name: config.name, kind: config.kind, enabled: config.enabled, forward_to: config.forward_to };
  const view: ProviderView['config'] =
    config.kind === 'redis-pubsub'
      ? { ...base, secrets: [], url: viewSource(sb, config.url), channels: config.channels, patterns: config.patterns, type_field: config.type_field }
      : config.kind === 'redis-stream'
        ? { ...base, secrets: [], url: viewSource(sb, config.url), stream: config.stream, group: config.group, type_field: config.type_field }
        : {
            ...base,
            secrets: config.secrets.map((source) => viewSource(sb, source)),
            ...(config.tolerance_s !== undefined ? { tolerance_s: config.tolerance_s } : {}),
            ...(config.public_key !== undefined ? { public_key: config.public_key } : {}),
            answer: config.answer ?? [],
          };
  return {
    status,
    forward_problems: sb.forwardProblems(forwardTargets(config)),
    config: view,
    receive_url: status.path ? `${sb.url.receiver}${status.path}` : null,
    public_url: status.path && publicBase ? new URL(status.path, publicBase).toString() : null,
    forward_targets: forwardTargets(config),
  };
}

function settingsOf(sb: Services): Settings {
  const config: Config = sb.config;
  return {
    receiver: {
      host: config.receiver.host,
      port: config.receiver.port,
      max_body_bytes: config.receiver.max_body_bytes,
      public_url: config.receiver.public_url ?? null,
    },
    control: { host: config.control.host, port: config.control.port },
    replay: {
      default_target: config.replay.default_target ?? null,
      allow_hosts: config.replay.allow_hosts,
      timeout_ms: config.replay.timeout_ms,
      resign: config.replay.resign,
    },
    retention: { ...config.retention },
    database: {
      kind: sb.store.databaseKind === 'pglite' ? 'pglite' : 'postgres',
      url: config.database.url === null ? null : redactDatabaseUrl(config.database.url),
      data_dir: sb.options.dataDir,
    },
    running: { receiver_port: portOf(sb.url.receiver), control_port: portOf(sb.url.control) },
    config_path: sb.configPath,
  };
}

const portOf = (origin: string): number => Number(new URL(origin).port);

/** A PostgreSQL URL without its password (in the userinfo or a `password=` parameter). */
export function redactDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return REDACTED; // a keyword/value DSN may hold password=… anywhere: show none of it
  }
  const user = parsed.username ? `${parsed.username}${parsed.password ? `:${REDACTED}` : ''}@` : '';
  const params = new URLSearchParams(parsed.search);
  const search = [...params.keys()].length
    ? `?${[...params.entries()].map(([key, value]) => `${key}=${key.toLowerCase() === 'password' ? REDACTED : value}`).join('&')}`
    : '';
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${search}`;
}
