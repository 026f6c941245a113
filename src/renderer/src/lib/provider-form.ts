import { z } from 'zod';
import { AnswerRuleSchema, type AnswerRule } from '../../../shared/delivery-lab';
import { QUEUE_KINDS, SIGNED_KINDS, TOKEN_KINDS } from '../../../shared/providers';
import { type ProviderInput, type ProviderKind, type ProviderView, type SecretInput, type SecretSourceView } from '../../../shared/api';

/**
 * The add/edit provider form's state and its conversion to the API input. Secrets are
 * write-only: an existing secret is shown by its source ("env GITHUB_SECRET") and kept by index;
 * a new one is typed as an env name or a value, and the value never comes back.
 */

export type SecretRow = { source: 'keep'; index: number; view: SecretSourceView } | { source: 'env'; env: string } | { source: 'value'; value: string };

export interface ProviderForm {
  name: string;
  kind: ProviderKind;
  enabled: boolean;
  secrets: SecretRow[];
  tolerance_s: string;
  public_key: string;
  forward_to: string;
  /** Answer rules (DESIGN §15) as the JSON list config.json holds; empty: none. */
  answer: string;
  url: SecretRow | null;
  channels: string;
  patterns: string;
  stream: string;
  group: string;
  type_field: string;
}

export const TIMESTAMPED_KINDS: readonly ProviderKind[] = ['stripe', 'slack', 'standard-webhooks', 'paddle', 'discord', 'linear'];

export const isQueueKind = (kind: ProviderKind) => (QUEUE_KINDS as readonly string[]).includes(kind);
export const needsSecrets = (kind: ProviderKind) =>
  kind !== 'discord' && ((SIGNED_KINDS as readonly string[]).includes(kind) || (TOKEN_KINDS as readonly string[]).includes(kind));

export function emptyForm(): ProviderForm {
  return {
    name: '',
    kind: 'github',
    enabled: true,
    secrets: [{ source: 'env', env: '' }],
    tolerance_s: '',
    public_key: '',
    forward_to: '',
    answer: '',
    url: { source: 'env', env: 'REDIS_URL' },
    channels: '',
    patterns: '',
    stream: '',
    group: '',
    type_field: '',
  };
}

export function formFromView(view: ProviderView): ProviderForm {
  const { config } = view;
  return {
    name: config.name,
    kind: config.kind as ProviderKind,
    enabled: config.enabled,
    secrets: config.secrets.map((secret, index) => ({ source: 'keep', index, view: secret })),
    tolerance_s: config.tolerance_s === undefined ? '' : String(config.tolerance_s),
    public_key: config.public_key ?? '',
    forward_to: config.forward_to.join('\n'),
    answer: config.answer && config.answer.length > 0 ? JSON.stringify(config.answer, null, 2) : '',
    url: config.url ? { source: 'keep', index: 0, view: config.url } : null,
    channels: (config.channels ?? []).join('\n'),
    patterns: (config.patterns ?? []).join('\n'),
    stream: config.stream ?? '',
    group: config.group ?? '',
    type_field: config.type_field ?? '',
  };
}

export function describeSecret(view: SecretSourceView): string {
  if (view.source === 'env') return `env ${view.env}${view.present ? '' : ' (not set in this environment)'}`;
  if (view.source === 'stored') return `kept in the app’s encrypted store${view.present ? '' : ' (unreadable here)'}`;
  return 'written in config.json';
}

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean);

function toSecretInput(row: SecretRow): SecretInput | null {
  if (row.source === 'keep') return { keep: row.index };
  if (row.source === 'env') return row.env.trim() ? { env: row.env.trim() } : null;
  return row.value ? { value: row.value } : null;
}

/** The form → API input; returns problems instead when the form is not ready to send. */
export function formToInput(form: ProviderForm): { input: ProviderInput } | { errors: string[] } {
  const errors: string[] = [];
  if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(form.name)) errors.push('Name: lowercase letters, digits, "-" or "_" (it becomes /webhooks/<name>).');
  const input: ProviderInput = { name: form.name, kind: form.kind, enabled: form.enabled };
  const forward = lines(form.forward_to);
  input.forward_to = forward;
  if (isQueueKind(form.kind)) {
    const url = form.url ? toSecretInput(form.url) : null;
    if (!url) errors.push('Redis URL: give an environment variable name or the URL.');
    else input.url = url;
    if (form.kind === 'redis-pubsub') {
      input.channels = lines(form.channels);
      input.patterns = lines(form.patterns);
      if (input.channels.length + input.patterns.length === 0) errors.push('Channels: at least one channel or pattern.');
    } else {
      if (!form.stream.trim()) errors.push('Stream: the stream key to read.');
      else input.stream = form.stream.trim();
      if (form.group.trim()) input.group = form.group.trim();
    }
    if (form.type_field.trim()) input.type_field = form.type_field.trim();
    return errors.length ? { errors } : { input };
  }
  if (needsSecrets(form.kind)) {
    input.secrets = form.secrets.map(toSecretInput).filter((secret): secret is SecretInput => secret !== null);
  } else {
    input.secrets = [];
  }
  if (form.kind === 'discord') {
    if (!/^[0-9a-fA-F]{64}$/.test(form.public_key.trim())) errors.push('Public key: the 64 hex characters from the Discord developer portal.');
    else input.public_key = form.public_key.trim();
  }
  const answer = parseAnswerRules(form.answer);
  if ('error' in answer) errors.push(answer.error);
  else input.answer = answer.rules;
  if (form.tolerance_s.trim() && TIMESTAMPED_KINDS.includes(form.kind)) {
    const tolerance = Number(form.tolerance_s);
    if (!Number.isInteger(tolerance) || tolerance <= 0) errors.push('Tolerance: a whole number of seconds.');
    else input.tolerance_s = tolerance;
  }
  return errors.length ? { errors } : { input };
}

/** The answer-rules text → rules, or the first problem with its JSON path (as config.json reports it). */
export function parseAnswerRules(text: string): { rules: AnswerRule[] } | { error: string } {
  if (!text.trim()) return { rules: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { error: `Answer rules: not valid JSON (${(error as Error).message}).` };
  }
  const parsed = z.array(AnswerRuleSchema).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { error: `Answer rules: answer${issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}: ${issue.message}.` };
  }
  return { rules: parsed.data };
}

/** "Fail the next N deliveries with <status>": the rule put first, answering the first N attempts of each delivery. */
export function withQuickFailure(text: string, attempts: number, status: number): string {
  const current = parseAnswerRules(text);
  const rules = 'rules' in current ? current.rules : [];
  return JSON.stringify([{ status, first_attempts: attempts }, ...rules], null, 2);
}
