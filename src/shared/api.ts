import { z } from 'zod';
import type { ApiMethod } from './api-methods.js';
import { AnswerRuleSchema, ChaosProfileSchema, IDEMPOTENCY_VERDICTS } from './delivery-lab.js';
import {
  EventDetailSchema,
  EventSummarySchema,
  OriginSchema,
  PAYLOAD_ENCODINGS,
  REQUESTED_BY,
  RejectionSchema,
  ReplaySchema,
  TrustModeSchema,
} from './events.js';
import { CursorInputSchema, inputText, IsoDateSchema, IsoDateTimeSchema, MAX_NAME_CHARS, MAX_TEXT_CHARS, MAX_URL_CHARS } from './input.js';
import { PROVIDER_KINDS, ProviderStatusSchema } from './providers.js';
import { EventTypeShapeSchema, ShapeSummarySchema } from './shapes.js';
import {
  CaseDetailSchema,
  CaseResultSchema,
  SUITE_DEFAULT_CASES,
  SUITE_MAX_CASES,
  SUITE_MAX_CONCURRENCY,
  SuiteCaseSchema,
  SuiteNameSchema,
  SuiteRunSchema,
  SuiteSummarySchema,
} from './suites.js';

/**
 * The UI API contract: one input and one output schema per method. The HTTP transport
 * (`/api` on the control port), the Electron IPC handlers, the preload and the renderer's
 * client are all derived from this table, so adding a method touches this file and one handler.
 *
 * Secrets typed into the UI are write-only: input schemas may carry them, no output schema
 * has a field that could hold one (secret sources are described by kind, env names only).
 */

// ---------------------------------------------------------------------------------------------
// Events and replays

export const EVENTS_PAGE_MAX = 500;

/** Who may say they are asking through the UI API; `mcp` and `forward` are the core's own. */
export const API_CALLERS = ['ui', 'api', 'cli'] as const;

export const ListEventsInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).optional(),
  event_type: inputText().optional().describe('exactly this type'),
  event_type_prefix: inputText(MAX_NAME_CHARS).optional().describe('types starting with this text, e.g. "pull_request" or "checkout."'),
  trust_mode: TrustModeSchema.optional(),
  origin: OriginSchema.optional(),
  external_id: inputText().optional(),
  search: inputText(MAX_TEXT_CHARS, 0).optional().describe('free text matched against raw payloads and event types'),
  drift: z.boolean().optional().describe("true: only events that differ from their type's shape (DESIGN §16)"),
  cursor: CursorInputSchema.optional(),
  limit: z.number().int().min(1).max(EVENTS_PAGE_MAX).default(100),
});
/** How the last replay or forward of an event went (the Events list marks failures). */
export const LastReplaySchema = z.object({
  delivered: z.boolean(),
  response_status: z.number().int().nullable(),
  requested_by: z.enum(REQUESTED_BY),
  created_at: z.string(),
});
export type LastReplay = z.infer<typeof LastReplaySchema>;

/** A row of the Events list: the summary and, when it was ever replayed, its last replay. */
export const EventListItemSchema = EventSummarySchema.extend({
  last_replay: LastReplaySchema.nullable(),
  /** With a search: a short excerpt of the payload around the match (absent when only the type matched). */
  snippet: z.string().optional(),
});
export type EventListItem = z.infer<typeof EventListItemSchema>;

/** How far the search index has come while it is being built (DESIGN §17): searches of older events are slower meanwhile. */
export const IndexProgressSchema = z.object({ indexed: z.number().int().nonnegative(), total: z.number().int().nonnegative() });
export type IndexProgress = z.infer<typeof IndexProgressSchema>;

/** What every face says while the search index is being built (the UI, the CLI). */
export function indexingNote(progress: IndexProgress): string {
  const percent = progress.total > 0 ? Math.floor((100 * progress.indexed) / progress.total) : 0;
  return `indexing ${percent} % — older events searched more slowly`;
}

export const ListEventsOutputSchema = z.object({
  events: z.array(EventListItemSchema),
  next_cursor: z.string().optional(),
  /** A search that ran out of time before filling the page: how far back it read (EventStore Page). */
  searched_back_to: z.string().optional(),
  /** Beside searched_back_to while the search index is still being built: how far it has come (DESIGN §17). */
  index_progress: IndexProgressSchema.optional(),
});

export const GetEventInputSchema = z.strictObject({ id: z.number().int().positive() });
export const GetEventOutputSchema = z.object({
  event: EventDetailSchema,
  replays: z.array(ReplaySchema).describe('replay history, newest first'),
});

export const ReplayEventInputSchema = z.strictObject({
  id: z.number().int().positive(),
  target_url: inputText(MAX_URL_CHARS).optional().describe("default: the provider's forward target, else the event's last target, else replay.default_target"),
  resign: z.boolean().optional().describe('defaults to replay.resign'),
  payload: z.string().optional().describe('edited body to send instead of the stored one'),
  payload_encoding: z.enum(PAYLOAD_ENCODINGS).default('utf8'),
  headers: z.record(inputText(MAX_NAME_CHARS), inputText(MAX_URL_CHARS * 4, 0)).optional().describe('headers to add or override'),
  overrides: z
    .record(inputText(), z.unknown())
    .optional()
    .describe('dot path → JSON value set in the JSON body (form fields by name), e.g. {"data.object.amount_total": 999}; applied to payload when given'),
  requested_by: z.enum(API_CALLERS).optional().describe('who is asking, recorded on the replay row (default api; the web UI sends ui)'),
  chaos: ChaosProfileSchema.optional(),
});
export const ReplayEventOutputSchema = ReplaySchema.extend({
  copies: z.array(ReplaySchema).optional().describe('the duplicates a chaos profile sent after this one'),
  idempotency: z.enum(IDEMPOTENCY_VERDICTS).nullable().optional(),
});

/**
 * A replay built but not sent ("Copy as cURL (re-signed)"): the body and headers the replay
 * engine would send to `target_url`, with a fresh signature when re-signing is possible.
 */
export const PrepareReplayInputSchema = ReplayEventInputSchema;
export const PrepareReplayOutputSchema = z.object({
  target_url: z.string(),
  headers: z.record(z.string(), z.string()).describe('the headers a replay sends, fresh signature included'),
  payload: z.string(),
  payload_encoding: z.enum(PAYLOAD_ENCODINGS),
  resigned: z.boolean(),
  warning: z.string().nullable().describe('why the request is not re-signed when re-signing was asked for, or that an imported (unverified) event is re-signed'),
});

export const ListReplaysInputSchema = z.strictObject({ event_id: z.number().int().positive() });
export const ListReplaysOutputSchema = z.object({ replays: z.array(ReplaySchema) });

export const ClearEventsInputSchema = z.strictObject({});
export const ClearEventsOutputSchema = z.object({ cleared: z.literal(true) });

// ---------------------------------------------------------------------------------------------
// Test events and import (DESIGN §11, §12). Export is a streaming HTTP route, GET /api/export.

export const TestEventInfoSchema = z.object({
  provider: z.string(),
  kind: z.string(),
  event_type: z.string(),
  description: z.string(),
});
export type TestEventInfo = z.infer<typeof TestEventInfoSchema>;

export const ListTestEventsInputSchema = z.strictObject({ provider: inputText(MAX_NAME_CHARS).optional().describe('one provider; default: every configured one') });
export const ListTestEventsOutputSchema = z.object({ test_events: z.array(TestEventInfoSchema) });

export const SendTestEventInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS),
  event_type: inputText().optional().describe("defaults to the kind's first fixture"),
  overrides: z.record(inputText(), z.unknown()).optional().describe('dot path → JSON value, e.g. {"data.object.amount_total": 999}'),
  payload: z.string().optional().describe('a whole payload instead of the fixture (sent as is, signed)'),
});
export const SendTestEventOutputSchema = z.object({ event: EventSummarySchema });

export const ImportEventsInputSchema = z.strictObject({ ndjson: z.string().describe('NDJSON as written by export (for big files, stream them to POST /api/import)') });
export const ImportEventsOutputSchema = z.object({
  imported: z.number().int().nonnegative(),
  duplicates: z.number().int().nonnegative().describe('lines already stored (same provider and external_id, or same provider, time and payload)'),
  errors: z.array(z.object({ line: z.number().int().positive(), message: z.string() })).describe('lines not imported, with why; at most 100 are listed'),
  error_count: z.number().int().nonnegative().describe('every line not imported, listed or not'),
  warnings: z
    .array(z.string())
    .optional()
    .describe('what else to know, when there is something: lines repeated within the file, external ids cut to 512 characters, events retention will remove'),
});

/** `GET /api/export` query (DESIGN §12): the list filters plus a time window; times ISO-8601. */
export const EXPORT_FORMATS = ['ndjson', 'har'] as const;
export const ExportQuerySchema = z.strictObject({
  format: z.enum(EXPORT_FORMATS).default('ndjson'),
  provider: z.string().min(1).optional(),
  event_type: z.string().min(1).optional(),
  event_type_prefix: inputText(MAX_NAME_CHARS).optional().describe('types starting with this text (the UI type box)'),
  trust_mode: TrustModeSchema.optional(),
  origin: OriginSchema.optional(),
  search: z.string().min(1).max(1000).optional(),
  since: z.union([IsoDateTimeSchema, IsoDateSchema]).optional().describe('received at or after (inclusive)'),
  until: z.union([IsoDateTimeSchema, IsoDateSchema]).optional().describe('received before (exclusive)'),
});
export type ExportQuery = z.infer<typeof ExportQuerySchema>;

// ---------------------------------------------------------------------------------------------
// Providers

export const ProviderKindSchema = z.enum(PROVIDER_KINDS);
export type ProviderKind = z.infer<typeof ProviderKindSchema>;

/** How a secret is supplied, without its value: env names are shown, values and vault ids never. */
export const SecretSourceViewSchema = z.discriminatedUnion('source', [
  z.object({ source: z.literal('env'), env: z.string(), present: z.boolean() }),
  z.object({ source: z.literal('value') }),
  z.object({ source: z.literal('stored'), present: z.boolean() }),
]);
export type SecretSourceView = z.infer<typeof SecretSourceViewSchema>;

/**
 * A secret as the UI submits it: an env variable name, a new value (stored in the desktop
 * vault when there is one, else written to config.json), or "keep the existing source at this
 * index" so editing a provider never needs the old secret back.
 */
export const SecretInputSchema = z.union([
  z.strictObject({ env: inputText(MAX_NAME_CHARS) }),
  z.strictObject({ value: inputText(MAX_URL_CHARS * 4) }),
  z.strictObject({ keep: z.number().int().nonnegative() }),
]);
export type SecretInput = z.infer<typeof SecretInputSchema>;

/** One provider's config.json entry as the UI edits it (snake_case, as in the file). */
export const ProviderInputSchema = z.strictObject({
  name: inputText(MAX_NAME_CHARS),
  kind: ProviderKindSchema,
  enabled: z.boolean().optional(),
  forward_to: z.array(inputText(MAX_URL_CHARS)).max(100).optional(),
  // webhook kinds
  secrets: z.array(SecretInputSchema).optional().describe('omitted on update: keep the current secrets'),
  tolerance_s: z.number().int().positive().optional(),
  public_key: inputText(MAX_NAME_CHARS, 0).optional(),
  answer: z.array(AnswerRuleSchema).max(100).optional().describe('answer rules (DESIGN §15); omitted on update: keep the current ones'),
  // queue kinds
  url: SecretInputSchema.optional().describe('Redis URL (may hold a password, so it is write-only too)'),
  channels: z.array(inputText()).max(100).optional(),
  patterns: z.array(inputText()).max(100).optional(),
  stream: inputText().optional(),
  group: inputText().optional(),
  type_field: inputText(MAX_NAME_CHARS).optional(),
});
export type ProviderInput = z.infer<typeof ProviderInputSchema>;

/** The config of a provider with every secret replaced by its description. */
export const ProviderConfigViewSchema = z.object({
  name: z.string(),
  kind: z.string(),
  enabled: z.boolean(),
  forward_to: z.array(z.string()),
  secrets: z.array(SecretSourceViewSchema),
  tolerance_s: z.number().optional(),
  public_key: z.string().optional(),
  answer: z.array(AnswerRuleSchema).optional(),
  url: SecretSourceViewSchema.optional(),
  channels: z.array(z.string()).optional(),
  patterns: z.array(z.string()).optional(),
  stream: z.string().optional(),
  group: z.string().optional(),
  type_field: z.string().optional(),
});
export type ProviderConfigView = z.infer<typeof ProviderConfigViewSchema>;

/** A forward rule that cannot deliver: the target guard refuses it, or its last attempt got no answer. */
export const ForwardProblemSchema = z.object({
  target: z.string(),
  problem: z.enum(['refused_by_guard', 'not_answering']),
  message: z.string(),
});
export type ForwardProblem = z.infer<typeof ForwardProblemSchema>;

export const ProviderViewSchema = z.object({
  status: ProviderStatusSchema,
  forward_problems: z.array(ForwardProblemSchema).default([]),
  config: ProviderConfigViewSchema,
  receive_url: z.string().nullable().describe('local receive URL (webhook providers)'),
  forward_targets: z.array(z.string()).describe("where every accepted event is forwarded, in order; the first is also the provider's default replay target"),
  public_url: z.string().nullable().describe('receive URL through receiver.public_url, when set'),
});
export type ProviderView = z.infer<typeof ProviderViewSchema>;

export const ListProvidersInputSchema = z.strictObject({});
export const ListProvidersOutputSchema = z.object({
  providers: z.array(ProviderViewSchema),
  /** Where UI-entered secrets go: the desktop vault, or config.json (headless). */
  secret_storage: z.enum(['vault', 'config-file']),
});

export const AddProviderInputSchema = z.strictObject({ provider: ProviderInputSchema });
export const UpdateProviderInputSchema = z.strictObject({
  name: inputText(MAX_NAME_CHARS).describe('current name (the provider may be renamed)'),
  provider: ProviderInputSchema,
});
export const ProviderOutputSchema = z.object({ provider: ProviderViewSchema });

export const RemoveProviderInputSchema = z.strictObject({ name: inputText(MAX_NAME_CHARS) });
export const RemoveProviderOutputSchema = z.object({ removed: z.string() });

export const SetProviderEnabledInputSchema = z.strictObject({ name: inputText(MAX_NAME_CHARS), enabled: z.boolean() });

/**
 * What the Providers screen and the Events footer show about the log, bounded rather than
 * counted (src/core/store/provider-activity.ts): a count equal to `count_cap` means "at least".
 */
export const GetActivityInputSchema = z.strictObject({});
export const GetActivityOutputSchema = z.object({
  providers: z.array(
    z.object({
      provider: z.string(),
      last_event_at: z.string().nullable(),
      events: z.number().int().nonnegative(),
      last_rejection_at: z.string().nullable(),
      rejections: z.number().int().nonnegative(),
    }),
  ),
  /** Rejections of every provider, configured or not. */
  rejections: z.number().int().nonnegative(),
  count_cap: z.number().int().positive(),
  /** Events stored, estimated from the id range (never a count of the table). */
  events_estimate: z.number().int().nonnegative(),
});
export type Activity = z.infer<typeof GetActivityOutputSchema>;

export const ListRejectionsInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).optional(),
  cursor: CursorInputSchema.optional(),
  limit: z.number().int().min(1).max(EVENTS_PAGE_MAX).default(100),
});
export const ListRejectionsOutputSchema = z.object({
  rejections: z.array(RejectionSchema),
  next_cursor: z.string().optional(),
});

// ---------------------------------------------------------------------------------------------
// Settings and server info

export const SettingsSchema = z.object({
  receiver: z.object({
    host: z.string(),
    port: z.number().int(),
    max_body_bytes: z.number().int(),
    public_url: z.string().nullable(),
  }),
  control: z.object({ host: z.string(), port: z.number().int() }),
  replay: z.object({
    default_target: z.string().nullable(),
    allow_hosts: z.array(z.string()),
    timeout_ms: z.number().int(),
    resign: z.boolean(),
  }),
  retention: z.object({ max_age_days: z.number(), max_rows: z.number().int(), max_rejections: z.number().int() }),
  database: z.object({
    kind: z.enum(['pglite', 'postgres']),
    /** config's database.url with any password replaced by «redacted». */
    url: z.string().nullable(),
    data_dir: z.string(),
  }),
  /** What the running process actually listens on (config ports may differ until a restart). */
  running: z.object({ receiver_port: z.number().int(), control_port: z.number().int() }),
  config_path: z.string(),
});
export type Settings = z.infer<typeof SettingsSchema>;

const portInput = z.number().int().min(0).max(65_535);

export const GetSettingsInputSchema = z.strictObject({});
export const GetSettingsOutputSchema = SettingsSchema;

export const UpdateSettingsInputSchema = z.strictObject({
  receiver: z
    .strictObject({
      port: portInput.optional(),
      max_body_bytes: z.number().int().positive().optional(),
      public_url: inputText(MAX_URL_CHARS).nullable().optional().describe('null removes it'),
    })
    .optional(),
  control: z.strictObject({ port: portInput.optional() }).optional(),
  replay: z
    .strictObject({
      default_target: inputText(MAX_URL_CHARS).nullable().optional(),
      allow_hosts: z.array(inputText(MAX_NAME_CHARS)).max(1000).optional(),
      timeout_ms: z.number().int().positive().optional(),
      resign: z.boolean().optional(),
    })
    .optional(),
  retention: z
    .strictObject({
      max_age_days: z.number().positive().optional(),
      max_rows: z.number().int().positive().optional(),
      max_rejections: z.number().int().positive().optional(),
    })
    .optional(),
  database: z.strictObject({ url: inputText(MAX_URL_CHARS).nullable() }).optional(),
});
export const UpdateSettingsOutputSchema = z.object({
  settings: SettingsSchema,
  /** Changed settings that take effect only after a restart (ports, database), as JSON paths. */
  restart_required: z.array(z.string()),
});

/** A hand edit of config.json that was refused (the previous configuration keeps running). */
export const ConfigProblemSchema = z.object({
  file: z.string(),
  message: z.string(),
  /** Where in the JSON (`providers[2].secrets`), when known. */
  path: z.string().nullable(),
  line: z.number().int().positive().nullable(),
  column: z.number().int().positive().nullable(),
});
export type ConfigProblem = z.infer<typeof ConfigProblemSchema>;

export const GetServerInfoInputSchema = z.strictObject({});
export const GetServerInfoOutputSchema = z.object({
  version: z.string(),
  receiver_url: z.string(),
  public_url: z.string().nullable(),
  control_url: z.string(),
  mcp_url: z.string(),
  /** The control token: the Connect screen shows it inside the commands below. */
  token: z.string(),
  claude_command: z.string(),
  mcp_json: z.string().describe('a .mcp.json snippet'),
  /** Connected MCP sessions, when the MCP server reports them. */
  mcp_sessions: z.number().int().nonnegative().nullable(),
  data_dir: z.string(),
  /** The MCP server's tools, by name, as its catalog lists them. */
  mcp_tools: z.array(z.string()).default([]),
  /** The last hand edit of config.json, when it was refused; null once the file is valid again. */
  config_problem: ConfigProblemSchema.nullable().default(null),
});
export type ServerInfo = z.infer<typeof GetServerInfoOutputSchema>;

// ---------------------------------------------------------------------------------------------
// Suites (DESIGN §14): captured events as a regression suite for the developer's handler

const SuiteFilterSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).optional(),
  event_type: inputText().optional(),
  event_type_prefix: inputText(MAX_NAME_CHARS).optional(),
  trust_mode: TrustModeSchema.optional(),
  origin: OriginSchema.optional(),
  search: inputText(MAX_TEXT_CHARS).optional(),
  since: z.union([IsoDateTimeSchema, IsoDateSchema]).optional().describe('received at or after (inclusive)'),
  until: z.union([IsoDateTimeSchema, IsoDateSchema]).optional().describe('received before (exclusive)'),
  limit: z.number().int().min(1).max(SUITE_MAX_CASES).optional().describe(`cases, oldest first (default ${SUITE_DEFAULT_CASES})`),
});
const SuiteNameInput = { name: SuiteNameSchema };

export const ListSuitesInputSchema = z.strictObject({});
export const ListSuitesOutputSchema = z.object({ suites: z.array(SuiteSummarySchema) });
export const GetSuiteInputSchema = z.strictObject(SuiteNameInput);
export const GetSuiteOutputSchema = z.object({ suite: SuiteSummarySchema, cases: z.array(SuiteCaseSchema) });
export const SaveSuiteInputSchema = z.strictObject({
  ...SuiteNameInput,
  event_ids: z.array(z.number().int().positive()).min(1).max(SUITE_MAX_CASES).optional().describe('these events, in this order'),
  filter: SuiteFilterSchema.optional().describe('the events the list filters select, oldest first'),
  ignore: z.array(inputText(500)).max(200).optional().describe('JSONPath patterns not compared, e.g. $.received_at, $..id'),
  compare_headers: z.array(inputText(MAX_NAME_CHARS)).max(50).optional().describe('response headers compared (none by default)'),
});
export const SaveSuiteOutputSchema = z.object({ suite: SuiteSummarySchema, created: z.boolean() });
export const DeleteSuiteInputSchema = z.strictObject(SuiteNameInput);
export const DeleteSuiteOutputSchema = z.object({ deleted: z.string() });
export const RunSuiteInputSchema = z.strictObject({
  ...SuiteNameInput,
  target_url: inputText(MAX_URL_CHARS).optional().describe('default: the suite’s last target, else replay.default_target'),
  concurrency: z.number().int().min(1).max(SUITE_MAX_CONCURRENCY).optional().describe('cases in flight at once (default 1: one at a time, in order)'),
  accept: z.boolean().optional().describe('this run becomes the expectation (every case is sent twice to learn noise)'),
  chaos: ChaosProfileSchema.optional().describe('reorder, delay and duplicate the cases (DESIGN §15); a seed is drawn and recorded when none is given'),
  requested_by: z.enum(API_CALLERS).optional(),
});
export const RunSuiteOutputSchema = z.object({ run: SuiteRunSchema.describe('running: follow it with getSuiteRun') });
export const ListSuiteRunsInputSchema = z.strictObject(SuiteNameInput);
export const ListSuiteRunsOutputSchema = z.object({ runs: z.array(SuiteRunSchema) });
export const GetSuiteRunInputSchema = z.strictObject({
  id: z.number().int().positive(),
  cases: z.boolean().default(true).describe('false: the run alone (following its progress)'),
  diffs: z.boolean().default(false).describe('include every case’s differences'),
  case: z.number().int().positive().optional().describe('this case’s differences and both bodies'),
});
export const GetSuiteRunOutputSchema = z.object({ run: SuiteRunSchema, cases: z.array(CaseResultSchema), detail: CaseDetailSchema.optional() });
export const AcceptSuiteRunInputSchema = z.strictObject({ id: z.number().int().positive() });
export const AcceptSuiteRunOutputSchema = z.object({ run: SuiteRunSchema, learned_ignores: z.array(z.string()), warning: z.string().nullable() });
export const ExportSuiteInputSchema = z.strictObject(SuiteNameInput);
export const ExportSuiteOutputSchema = z.object({ filename: z.string(), ndjson: z.string().describe('the suite file (DESIGN §14)') });
export const ImportSuiteInputSchema = z.strictObject({
  ndjson: z.string().describe('a suite file'),
  replace: z.boolean().default(false).describe('replace the suite of the same name'),
});
export const ImportSuiteOutputSchema = z.object({ suite: SuiteSummarySchema, created: z.boolean() });

// ---------------------------------------------------------------------------------------------
// Shapes (DESIGN §16): the inferred schema of every event type

export const ListEventTypesInputSchema = z.strictObject({ provider: inputText(MAX_NAME_CHARS).optional() });
export const ListEventTypesOutputSchema = z.object({ types: z.array(ShapeSummarySchema) });
export const DescribeEventTypeInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS),
  event_type: inputText(),
  max_fields: z.number().int().min(1).max(2000).optional().describe('default 2000'),
});
export const DescribeEventTypeOutputSchema = EventTypeShapeSchema;
export const ResetEventTypeInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS),
  event_type: inputText().optional().describe("omitted: every type of the provider"),
});
export const ResetEventTypeOutputSchema = z.object({ reset: z.number().int().nonnegative().describe('shapes forgotten') });

// ---------------------------------------------------------------------------------------------

export const API = {
  listEvents: { input: ListEventsInputSchema, output: ListEventsOutputSchema },
  getEvent: { input: GetEventInputSchema, output: GetEventOutputSchema },
  replayEvent: { input: ReplayEventInputSchema, output: ReplayEventOutputSchema },
  prepareReplay: { input: PrepareReplayInputSchema, output: PrepareReplayOutputSchema },
  listReplays: { input: ListReplaysInputSchema, output: ListReplaysOutputSchema },
  clearEvents: { input: ClearEventsInputSchema, output: ClearEventsOutputSchema },
  listTestEvents: { input: ListTestEventsInputSchema, output: ListTestEventsOutputSchema },
  sendTestEvent: { input: SendTestEventInputSchema, output: SendTestEventOutputSchema },
  importEvents: { input: ImportEventsInputSchema, output: ImportEventsOutputSchema },
  listProviders: { input: ListProvidersInputSchema, output: ListProvidersOutputSchema },
  addProvider: { input: AddProviderInputSchema, output: ProviderOutputSchema },
  updateProvider: { input: UpdateProviderInputSchema, output: ProviderOutputSchema },
  removeProvider: { input: RemoveProviderInputSchema, output: RemoveProviderOutputSchema },
  setProviderEnabled: { input: SetProviderEnabledInputSchema, output: ProviderOutputSchema },
  listRejections: { input: ListRejectionsInputSchema, output: ListRejectionsOutputSchema },
  getActivity: { input: GetActivityInputSchema, output: GetActivityOutputSchema },
  getSettings: { input: GetSettingsInputSchema, output: GetSettingsOutputSchema },
  updateSettings: { input: UpdateSettingsInputSchema, output: UpdateSettingsOutputSchema },
  getServerInfo: { input: GetServerInfoInputSchema, output: GetServerInfoOutputSchema },
  listSuites: { input: ListSuitesInputSchema, output: ListSuitesOutputSchema },
  getSuite: { input: GetSuiteInputSchema, output: GetSuiteOutputSchema },
  saveSuite: { input: SaveSuiteInputSchema, output: SaveSuiteOutputSchema },
  deleteSuite: { input: DeleteSuiteInputSchema, output: DeleteSuiteOutputSchema },
  runSuite: { input: RunSuiteInputSchema, output: RunSuiteOutputSchema },
  listSuiteRuns: { input: ListSuiteRunsInputSchema, output: ListSuiteRunsOutputSchema },
  getSuiteRun: { input: GetSuiteRunInputSchema, output: GetSuiteRunOutputSchema },
  acceptSuiteRun: { input: AcceptSuiteRunInputSchema, output: AcceptSuiteRunOutputSchema },
  exportSuite: { input: ExportSuiteInputSchema, output: ExportSuiteOutputSchema },
  importSuite: { input: ImportSuiteInputSchema, output: ImportSuiteOutputSchema },
  listEventTypes: { input: ListEventTypesInputSchema, output: ListEventTypesOutputSchema },
  describeEventType: { input: DescribeEventTypeInputSchema, output: DescribeEventTypeOutputSchema },
  resetEventType: { input: ResetEventTypeInputSchema, output: ResetEventTypeOutputSchema },
} satisfies Record<ApiMethod, { input: z.ZodType; output: z.ZodType }>;

/** What a caller passes (defaults optional). */
export type ApiInput<M extends ApiMethod> = z.input<(typeof API)[M]['input']>;
/** What a handler receives after parsing (defaults filled in). */
export type ApiParsedInput<M extends ApiMethod> = z.output<(typeof API)[M]['input']>;
export type ApiOutput<M extends ApiMethod> = z.output<(typeof API)[M]['output']>;

export type SwitchboardApi = { [M in ApiMethod]: (input: ApiInput<M>) => Promise<ApiOutput<M>> };

// ---------------------------------------------------------------------------------------------
// Live stream (SSE on /api/live, LIVE_CHANNEL over IPC)

export const LiveMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('event'), event: EventSummarySchema }),
  z.object({ type: z.literal('rejection'), rejection: RejectionSchema }),
  z.object({ type: z.literal('replay'), replay: ReplaySchema }),
  z.object({ type: z.literal('provider-status'), provider: ProviderStatusSchema }),
  z.object({ type: z.literal('config-changed') }),
  z.object({ type: z.literal('config-problem'), problem: ConfigProblemSchema.nullable() }),
]);
export type LiveMessage = z.infer<typeof LiveMessageSchema>;

/** Every failure, on both transports. `code` is one of the core's error codes. */
export const ApiErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  hint: z.string().optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;
