import { forwardRef, useCallback, useEffect, useId, useRef, useState } from 'react';
import { type Activity, type ProviderView } from '../../../shared/api';
import { PROVIDER_KINDS, QUEUE_KINDS, SIGNED_KINDS, TOKEN_KINDS } from '../../../shared/providers';
import type { Rejection } from '../../../shared/events';
import { useAppData } from '../app-data';
import { CopyField } from '../components/copy-button';
import { TrustBadge } from '../components/trust-badge';
import { formatBytes } from '../lib/bytes';
import {
  describeSecret,
  emptyForm,
  formFromView,
  formToInput,
  isQueueKind,
  needsSecrets,
  parseAnswerRules,
  withQuickFailure,
  TIMESTAMPED_KINDS,
  type ProviderForm,
  type SecretRow,
} from '../lib/provider-form';
import { formatAgo, formatTime } from '../lib/time';
import { formatCount, useActivity } from '../lib/activity';
import { useIntent } from '../navigation';
import { SendTestEvent } from '../components/send-test-event';

export function ProvidersScreen() {
  const { client, providers, loadError, listen } = useAppData();
  const [intent, clearIntent] = useIntent();
  const [editing, setEditing] = useState<{ mode: 'add' } | { mode: 'edit'; view: ProviderView } | null>(null);
  const [rejectionsOf, setRejectionsOf] = useState('');
  const rejectionsRef = useRef<HTMLElement>(null);
  const { activity } = useActivity({ client, listen });

  useEffect(() => {
    if (intent === 'add-provider') {
      setEditing({ mode: 'add' });
      clearIntent();
    } else if (intent === 'show-rejections') {
      setRejectionsOf('');
      rejectionsRef.current?.scrollIntoView({ block: 'start' });
      clearIntent();
    }
  }, [intent, clearIntent]);

  const showRejections = useCallback((provider: string) => {
    setRejectionsOf(provider);
    rejectionsRef.current?.scrollIntoView({ block: 'start' });
  }, []);

  return (
    <div className="page providers-screen">
      <header className="page-header">
        <h1>Providers</h1>
        {!editing && (
          <button type="button" className="primary-button" onClick={() => setEditing({ mode: 'add' })}>
            Add provider
          </button>
        )}
      </header>
      {loadError && (
        <p role="alert" className="error-banner">
          {loadError}
        </p>
      )}
      {editing && <ProviderFormPanel key={editing.mode === 'edit' ? editing.view.status.name : 'add'} editing={editing} onDone={() => setEditing(null)} />}
      {providers?.length === 0 && !editing && (
        <div className="empty-state">
          <h2>No providers yet</h2>
          <p>
            Add one for each sender. Signed kinds (GitHub, Stripe, Slack, …) verify every delivery with the provider’s secret; <em>token</em> checks a shared token;
            <em> open</em> accepts anything and is meant for trusted local senders only.
          </p>
        </div>
      )}
      {providers && providers.length > 0 && (
        <div className="provider-list-head" aria-hidden="true">
          <span>Provider</span>
          <span>Status</span>
          <span>Last delivery</span>
          <span className="num">Events</span>
          <span className="num">Rejections</span>
          <span />
        </div>
      )}
      <ul className="provider-list" aria-label="Providers">
        {providers?.map((view) => (
          <ProviderRow
            key={view.status.name}
            view={view}
            activity={activity?.providers.find((row) => row.provider === view.status.name) ?? null}
            cap={activity?.count_cap ?? Infinity}
            onEdit={() => setEditing({ mode: 'edit', view })}
            onShowRejections={() => showRejections(view.status.name)}
          />
        ))}
      </ul>
      <RejectionsSection ref={rejectionsRef} provider={rejectionsOf} onProvider={setRejectionsOf} />
    </div>
  );
}

/** What a provider's status chip says: a missing secret or a failing forward rule is never "listening" in green. */
function statusOf(view: ProviderView): { text: string; tone: 'good' | 'warn' | 'bad' | 'off'; title?: string } {
  const { status } = view;
  if (!status.enabled) return { text: 'disabled', tone: 'off' };
  if (status.secret_status === 'missing') {
    return { text: status.family === 'queue' ? 'no Redis URL' : 'secret missing', tone: 'bad', title: status.last_error ?? 'deliveries are refused (503) until a secret is configured' };
  }
  if (status.status === 'error') return { text: 'error', tone: 'bad', ...(status.last_error ? { title: status.last_error } : {}) };
  if (status.status === 'connecting') return { text: 'connecting', tone: 'warn' };
  if (view.forward_problems.length > 0) return { text: 'forward failing', tone: 'warn', title: view.forward_problems.map((problem) => `${problem.target}: ${problem.message}`).join('\n') };
  return { text: status.status, tone: 'good' };
}

/** What secures a provider, in words; never a secret. */
function secretLine(view: ProviderView): string {
  const { status, config } = view;
  if (status.secret_status === 'none-by-design') return 'No secret: open providers accept any request.';
  if (status.secret_status === 'missing') {
    return status.family === 'queue' ? 'Redis URL missing — set it, or the provider cannot connect.' : 'Secret missing — deliveries are refused (503) until one is configured.';
  }
  if (config.public_key) return `Public key: ${config.public_key.slice(0, 12)}… (Ed25519; Discord signs with its private half)`;
  const sources = [...config.secrets, ...(config.url ? [config.url] : [])].map(describeSecret);
  return sources.length > 0 ? `${status.family === 'queue' ? 'Redis URL' : 'Secret'}: ${sources.join('; ')}` : 'No secret configured.';
}

/**
 * One provider, one row: name, kind, trust, status, last delivery, counts and its switch; the
 * details (receive URLs, secret, forward rules, test events, edit/remove) open on demand, in
 * sections so more can be added without making every row taller.
 */
function ProviderRow({
  view,
  activity,
  cap,
  onEdit,
  onShowRejections,
}: {
  view: ProviderView;
  activity: Activity['providers'][number] | null;
  cap: number;
  onEdit: () => void;
  onShowRejections: () => void;
}) {
  const { client, settings } = useAppData();
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { status, config } = view;
  const headingId = useId();
  const detailsId = useId();
  const shown = statusOf(view);

  const act = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <li className={`provider-card${status.enabled ? '' : ' disabled'}${open ? ' open' : ''}`} aria-labelledby={headingId}>
      <div className="provider-row">
        <span className="provider-name">
          <h2 id={headingId} title={status.name}>
            {status.name}
          </h2>
          <TrustBadge mode={status.trust_mode} compact />
          <span className="kind-tag" title={`kind: ${status.kind}`}>
            {status.kind}
          </span>
        </span>
        <span>
          <span className={`run-status tone-${shown.tone}`} title={shown.title}>
            {shown.text}
          </span>
        </span>
        <span className="muted small" title={activity?.last_event_at ?? undefined}>
          {activity === null ? '' : activity.last_event_at ? formatAgo(activity.last_event_at) : 'never'}
        </span>
        <span className="num mono" aria-label={`${status.name} events`}>
          {activity ? formatCount(activity.events, cap) : ''}
        </span>
        <span className="num">
          {activity && activity.rejections > 0 ? (
            <button type="button" className="count-button bad" onClick={onShowRejections} aria-label={`${formatCount(activity.rejections, cap)} rejections of ${status.name}`} title={activity.last_rejection_at ? `last ${formatAgo(activity.last_rejection_at)}` : undefined}>
              {formatCount(activity.rejections, cap)}
            </button>
          ) : (
            <span className="muted mono">{activity ? '0' : ''}</span>
          )}
        </span>
        <span className="provider-row-actions">
          <button
            type="button"
            role="switch"
            aria-checked={status.enabled}
            aria-label={`Enable ${status.name}`}
            className="switch"
            disabled={busy}
            onClick={() => void act(() => client.setProviderEnabled({ name: status.name, enabled: !status.enabled }))}
          >
            <span className="switch-knob" aria-hidden="true" />
            <span className="switch-text">{status.enabled ? 'Enabled' : 'Disabled'}</span>
          </button>
          <button type="button" className="quiet-button" aria-expanded={open} aria-controls={detailsId} aria-label={`Details of ${status.name}`} onClick={() => setOpen(!open)}>
            {open ? 'Hide' : 'Details'}
          </button>
        </span>
      </div>
      {(status.secret_status === 'missing' || status.status === 'error') && status.last_error && (
        <p className="error-banner small" role="status">
          {status.last_error}
        </p>
      )}
      {view.forward_problems.map((problem) => (
        <p key={problem.target} className="warning-banner small forward-problem" role="status">
          <strong>Forward to {problem.target}</strong> {problem.problem === 'refused_by_guard' ? 'is refused by the replay guard' : 'got no answer'}: {problem.message}
        </p>
      ))}
      {error && (
        <p role="alert" className="error-banner">
          {error}
        </p>
      )}
      <div id={detailsId} className="provider-details" hidden={!open}>
        <section className="provider-section" aria-label={`${status.name} receiving`}>
          {view.receive_url && <CopyField label={`${status.name} local receive URL`} value={view.receive_url} />}
          {view.public_url && <CopyField label={`${status.name} public receive URL`} value={view.public_url} />}
          {view.receive_url && !view.public_url && (
            <p className="muted small">No public URL: set your tunnel’s address as the receiver public URL in Settings to see it here.</p>
          )}
          {status.channel && (
            <p>
              <span className="muted">{status.kind === 'redis-stream' ? 'Stream' : 'Channels'}:</span> <code>{status.channel}</code>
              {status.kind === 'redis-pubsub' && <span className="muted small"> · pub/sub is at-most-once: messages published while disconnected are lost</span>}
            </p>
          )}
          <p className={status.secret_status === 'missing' ? 'secret-missing' : 'muted'}>{secretLine(view)}</p>
        </section>
        <section className="provider-section" aria-label={`${status.name} forwarding`}>
          {config.forward_to.length > 0 ? (
            <p>
              <span className="muted">Forwards every event to</span>{' '}
              {config.forward_to.map((url) => (
                <code key={url} className="forward-url">
                  {url}
                </code>
              ))}
            </p>
          ) : (
            settings?.replay.default_target && <p className="muted small">No forward rule: replays go to the default target on demand.</p>
          )}
        </section>
        {status.enabled && (
          <section className="provider-section" aria-label={`${status.name} test events`}>
            <SendTestEvent provider={status.name} />
          </section>
        )}
        <footer className="provider-card-actions">
          <button type="button" className="quiet-button" onClick={onEdit} aria-label={`Edit ${status.name}`}>
            Edit
          </button>
          {confirmRemove ? (
            <>
              <button type="button" className="danger-button" disabled={busy} onClick={() => void act(() => client.removeProvider({ name: status.name }))}>
                Remove {status.name} for good
              </button>
              <button type="button" className="quiet-button" onClick={() => setConfirmRemove(false)}>
                Keep it
              </button>
            </>
          ) : (
            <button type="button" className="quiet-button" onClick={() => setConfirmRemove(true)} aria-label={`Remove ${status.name}`}>
              Remove
            </button>
          )}
        </footer>
      </div>
    </li>
  );
}

const KIND_GROUPS: { label: string; kinds: readonly string[] }[] = [
  { label: 'Signed (verified)', kinds: SIGNED_KINDS },
  { label: 'Token', kinds: TOKEN_KINDS },
  { label: 'Open (no check)', kinds: ['open'] },
  { label: 'Queue', kinds: QUEUE_KINDS },
];

function ProviderFormPanel({ editing, onDone }: { editing: { mode: 'add' } | { mode: 'edit'; view: ProviderView }; onDone: () => void }) {
  const { client, secretStorage } = useAppData();
  const [form, setForm] = useState<ProviderForm>(() => (editing.mode === 'edit' ? formFromView(editing.view) : emptyForm()));
  const [errors, setErrors] = useState<string[]>([]);
  const [saving, setSaving] = useState(false);
  const set = <K extends keyof ProviderForm>(key: K, value: ProviderForm[K]) => setForm((current) => ({ ...current, [key]: value }));
  const queue = isQueueKind(form.kind);
  const title = editing.mode === 'add' ? 'Add a provider' : `Edit ${editing.view.status.name}`;

  const submit = async () => {
    const result = formToInput(form);
    if ('errors' in result) {
      setErrors(result.errors);
      return;
    }
    setSaving(true);
    setErrors([]);
    try {
      if (editing.mode === 'add') await client.addProvider({ provider: result.input });
      else await client.updateProvider({ name: editing.view.status.name, provider: result.input });
      onDone();
    } catch (failure) {
      const { message, hint } = failure as { message: string; hint?: string };
      setErrors([hint ? `${message} — ${hint}` : message]);
    } finally {
      setSaving(false);
    }
  };

  return (
    <section className="form-panel" aria-label={title}>
      <h2>{title}</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <div className="form-grid">
          <label className="field">
            <span>Name</span>
            <input value={form.name} onChange={(event) => set('name', event.target.value.toLowerCase())} placeholder="github" required autoFocus={editing.mode === 'add'} />
            <span className="help">Its route: /webhooks/{form.name || '<name>'}</span>
          </label>
          <label className="field">
            <span>Kind</span>
            <select value={form.kind} onChange={(event) => set('kind', event.target.value as ProviderForm['kind'])}>
              {KIND_GROUPS.map((group) => (
                <optgroup key={group.label} label={group.label}>
                  {group.kinds
                    .filter((kind) => (PROVIDER_KINDS as readonly string[]).includes(kind))
                    .map((kind) => (
                      <option key={kind} value={kind}>
                        {kind}
                      </option>
                    ))}
                </optgroup>
              ))}
            </select>
            {form.kind === 'open' && <span className="help warn">Open accepts any request from anyone who can reach the URL.</span>}
          </label>
        </div>

        {needsSecrets(form.kind) && (
          <fieldset className="secrets">
            <legend>{form.kind === 'token' || form.kind === 'gitlab' ? 'Tokens' : 'Signing secrets'}</legend>
            <p className="help">
              Write-only: a secret typed here is never shown again. Several secrets let you rotate — any one that verifies wins.{' '}
              {secretStorage === 'vault' ? 'Typed values are kept in the app’s encrypted store.' : 'Typed values are written into config.json (mode 0600); an environment variable is safer.'}
            </p>
            {form.secrets.map((row, index) => (
              <SecretRowEditor
                key={index}
                row={row}
                envPlaceholder={`${(form.name || form.kind).toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_${form.kind === 'token' || form.kind === 'gitlab' ? 'TOKEN' : 'WEBHOOK_SECRET'}`}
                label={`Secret ${index + 1}`}
                onChange={(next) => set('secrets', form.secrets.map((current, i) => (i === index ? next : current)))}
                onRemove={() => set('secrets', form.secrets.filter((_, i) => i !== index))}
              />
            ))}
            <button type="button" className="quiet-button" onClick={() => set('secrets', [...form.secrets, { source: 'env', env: '' }])}>
              Add a secret
            </button>
          </fieldset>
        )}

        {form.kind === 'discord' && (
          <label className="field wide">
            <span>Public key</span>
            <input className="mono" value={form.public_key} onChange={(event) => set('public_key', event.target.value)} placeholder="64 hex characters" />
          </label>
        )}

        {TIMESTAMPED_KINDS.includes(form.kind) && (
          <label className="field">
            <span>Timestamp tolerance (seconds)</span>
            <input inputMode="numeric" value={form.tolerance_s} onChange={(event) => set('tolerance_s', event.target.value)} placeholder="300" />
          </label>
        )}

        {queue && (
          <fieldset>
            <legend>Redis</legend>
            {form.url && <SecretRowEditor row={form.url} label="Redis URL" envPlaceholder="REDIS_URL" onChange={(next) => set('url', next)} />}
            {form.kind === 'redis-pubsub' ? (
              <div className="form-grid">
                <label className="field">
                  <span>Channels (one per line)</span>
                  <textarea aria-label="Channels" rows={2} value={form.channels} onChange={(event) => set('channels', event.target.value)} />
                </label>
                <label className="field">
                  <span>Patterns (one per line)</span>
                  <textarea aria-label="Patterns" rows={2} value={form.patterns} onChange={(event) => set('patterns', event.target.value)} />
                </label>
              </div>
            ) : (
              <div className="form-grid">
                <label className="field">
                  <span>Stream</span>
                  <input value={form.stream} onChange={(event) => set('stream', event.target.value)} />
                </label>
                <label className="field">
                  <span>Consumer group</span>
                  <input value={form.group} onChange={(event) => set('group', event.target.value)} placeholder="switchboard" />
                </label>
              </div>
            )}
            <label className="field">
              <span>Event type field</span>
              <input value={form.type_field} onChange={(event) => set('type_field', event.target.value)} placeholder="type" />
            </label>
          </fieldset>
        )}

        <label className="field wide">
          <span>Forward every event to (one URL per line)</span>
          <textarea aria-label="Forward every event to" rows={2} value={form.forward_to} onChange={(event) => set('forward_to', event.target.value)} placeholder={`http://localhost:3000/webhooks/${form.name || '<name>'}`} />
          <span className="help">Like stripe listen --forward-to, for any provider: each accepted event is replayed there (re-signed).</span>
        </label>

        {!isQueueKind(form.kind) && <AnswerRulesField value={form.answer} onChange={(value) => set('answer', value)} />}

        <label className="check">
          <input type="checkbox" checked={form.enabled} onChange={(event) => set('enabled', event.target.checked)} /> Enabled
        </label>

        {errors.length > 0 && (
          <div role="alert" className="error-banner">
            {errors.map((message) => (
              <p key={message}>{message}</p>
            ))}
          </div>
        )}
        <div className="form-actions">
          <button type="submit" className="primary-button" disabled={saving}>
            {saving ? 'Saving…' : editing.mode === 'add' ? 'Add provider' : 'Save provider'}
          </button>
          <button type="button" className="quiet-button" onClick={onDone}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

function SecretRowEditor({
  row,
  label,
  envPlaceholder,
  onChange,
  onRemove,
}: {
  row: SecretRow;
  label: string;
  envPlaceholder: string;
  onChange: (row: SecretRow) => void;
  onRemove?: () => void;
}) {
  return (
    <div className="secret-row" role="group" aria-label={label}>
      {row.source === 'keep' ? (
        <>
          <span className="secret-kept">{describeSecret(row.view)}</span>
          <button type="button" className="quiet-button" onClick={() => onChange({ source: 'value', value: '' })}>
            Replace
          </button>
        </>
      ) : (
        <>
          <select aria-label={`${label} source`} value={row.source} onChange={(event) => onChange(event.target.value === 'env' ? { source: 'env', env: '' } : { source: 'value', value: '' })}>
            <option value="env">Environment variable</option>
            <option value="value">Value</option>
          </select>
          {row.source === 'env' ? (
            <input aria-label={`${label} environment variable`} className="mono" value={row.env} placeholder={envPlaceholder} onChange={(event) => onChange({ source: 'env', env: event.target.value })} />
          ) : (
            <input aria-label={`${label} value`} type="password" autoComplete="off" className="mono" value={row.value} onChange={(event) => onChange({ source: 'value', value: event.target.value })} />
          )}
        </>
      )}
      {onRemove && (
        <button type="button" className="quiet-button" onClick={onRemove} aria-label={`Remove ${label}`}>
          Remove
        </button>
      )}
    </div>
  );
}

const REJECTIONS_PAGE = 100;

const RejectionsSection = forwardRef<HTMLElement, { provider: string; onProvider: (provider: string) => void }>(function RejectionsSection({ provider, onProvider }, ref) {
  const { client, providers, listen } = useAppData();
  const setProvider = onProvider;
  const [rejections, setRejections] = useState<Rejection[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    const load = () =>
      client.listRejections({ ...(provider ? { provider } : {}), limit: REJECTIONS_PAGE }).then(
        (page) => current && setRejections(page.rejections),
        (failure: Error) => current && setError(failure.message),
      );
    void load();
    const unlisten = listen((message) => {
      if (message === null) return void load();
      if (message.type !== 'rejection' || (provider && message.rejection.provider !== provider)) return;
      setRejections((list) => [message.rejection, ...list].slice(0, REJECTIONS_PAGE));
    });
    return () => {
      current = false;
      unlisten();
    };
  }, [client, listen, provider]);

  return (
    <section ref={ref} className="rejections" aria-labelledby="rejections-heading">
      <header className="section-head">
        <h2 id="rejections-heading">Rejections</h2>
        <select aria-label="Rejections of provider" value={provider} onChange={(event) => setProvider(event.target.value)}>
          <option value="">All providers</option>
          {providers?.map((view) => (
            <option key={view.status.name} value={view.status.name}>
              {view.status.name}
            </option>
          ))}
          {provider && !providers?.some((view) => view.status.name === provider) && <option value={provider}>{provider} (not configured)</option>}
        </select>
      </header>
      <p className="muted small">Deliveries that failed verification. Bodies are never kept — only their size and SHA-256 — with a diagnosis of the likely cause.</p>
      {error && (
        <p role="alert" className="error-banner">
          {error}
        </p>
      )}
      {rejections.length === 0 ? (
        <p className="muted">No rejections{provider ? ` for ${provider}` : ''}. </p>
      ) : (
        <table className="rejection-table" aria-label="Rejections">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Provider</th>
              <th scope="col">Reason</th>
              <th scope="col">Diagnosis</th>
              <th scope="col">Body</th>
            </tr>
          </thead>
          <tbody>
            {rejections.map((rejection) => (
              <tr key={rejection.id}>
                <td className="mono">{formatTime(rejection.received_at)}</td>
                <td>{rejection.provider}</td>
                <td>
                  <code className="reason">{rejection.reason}</code>
                </td>
                <td className="hint">{rejection.hint ?? <span className="muted">—</span>}</td>
                <td className="mono small" title={`sha256 ${rejection.body_sha256}`}>
                  {formatBytes(rejection.body_size)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
});

/**
 * Answer rules (DESIGN §15): what the provider is answered, as the JSON list config.json holds,
 * plus the quick "Fail the next N deliveries with <status>" that puts such a rule first.
 */
function AnswerRulesField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const [count, setCount] = useState('2');
  const [status, setStatus] = useState('503');
  const problem = parseAnswerRules(value);
  const n = Number(count);
  const code = Number(status);
  const usable = Number.isInteger(n) && n > 0 && Number.isInteger(code) && code >= 200 && code <= 599;
  return (
    <fieldset className="answer-rules wide">
      <legend>Answer rules — what the provider gets back</legend>
      <div className="quick-fail">
        <span>Fail the next</span>
        <input aria-label="Deliveries to fail" inputMode="numeric" value={count} onChange={(event) => setCount(event.target.value)} />
        <span>deliveries with</span>
        <input aria-label="Status to answer" inputMode="numeric" value={status} onChange={(event) => setStatus(event.target.value)} />
        <button type="button" disabled={!usable} onClick={() => onChange(withQuickFailure(value, n, code))}>
          Add rule
        </button>
      </div>
      <textarea
        aria-label="Answer rules"
        rows={value ? 6 : 2}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        placeholder='[{ "when": { "event_type": "invoice.*" }, "status": 503, "headers": { "retry-after": "5" }, "first_attempts": 2 }]'
      />
      <span className="help">
        {'error' in problem
          ? problem.error
          : 'First match wins; only stored, verified deliveries (never forged ones or handshakes). first_attempts: N answers attempts 1…N of each delivery, so you can watch the provider retry.'}
      </span>
    </fieldset>
  );
}
