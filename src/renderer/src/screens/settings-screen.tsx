import { useEffect, useState } from 'react';
import type { ApiInput, Settings } from '../../../shared/api';
import { useAppData } from '../app-data';

interface SettingsForm {
  receiver_port: string;
  control_port: string;
  public_url: string;
  max_body_bytes: string;
  default_target: string;
  allow_hosts: string;
  timeout_ms: string;
  resign: boolean;
  max_age_days: string;
  max_rows: string;
  database_url: string;
}

function formOf(settings: Settings): SettingsForm {
  return {
    receiver_port: String(settings.receiver.port),
    control_port: String(settings.control.port),
    public_url: settings.receiver.public_url ?? '',
    max_body_bytes: String(settings.receiver.max_body_bytes),
    default_target: settings.replay.default_target ?? '',
    allow_hosts: settings.replay.allow_hosts.join('\n'),
    timeout_ms: String(settings.replay.timeout_ms),
    resign: settings.replay.resign,
    max_age_days: String(settings.retention.max_age_days),
    max_rows: String(settings.retention.max_rows),
    // The current URL is shown redacted; only a newly typed one is sent.
    database_url: '',
  };
}

/** Only what changed, so saving one field never rewrites the others. */
function changes(settings: Settings, form: SettingsForm): { input: ApiInput<'updateSettings'>; errors: string[] } {
  const errors: string[] = [];
  const input: ApiInput<'updateSettings'> = {};
  const int = (label: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) {
      errors.push(`${label}: a whole number from ${min} to ${max}.`);
      return undefined;
    }
    return value;
  };
  const receiverPort = int('Receiver port', form.receiver_port, 0, 65535);
  const controlPort = int('Control port', form.control_port, 0, 65535);
  const maxBody = int('Max body size', form.max_body_bytes, 1);
  const timeout = int('Replay timeout', form.timeout_ms, 1, 600000);
  const maxRows = int('Max rows', form.max_rows, 1);
  const maxAge = Number(form.max_age_days);
  if (!(maxAge > 0)) errors.push('Max age: a positive number of days.');

  const receiver: NonNullable<typeof input.receiver> = {};
  if (receiverPort !== undefined && receiverPort !== settings.receiver.port) receiver.port = receiverPort;
  if (maxBody !== undefined && maxBody !== settings.receiver.max_body_bytes) receiver.max_body_bytes = maxBody;
  if (form.public_url.trim() !== (settings.receiver.public_url ?? '')) receiver.public_url = form.public_url.trim() || null;
  if (Object.keys(receiver).length) input.receiver = receiver;
  if (controlPort !== undefined && controlPort !== settings.control.port) input.control = { port: controlPort };

  const replay: NonNullable<typeof input.replay> = {};
  if (form.default_target.trim() !== (settings.replay.default_target ?? '')) replay.default_target = form.default_target.trim() || null;
  const hosts = form.allow_hosts
    .split(/[\n,]/)
    .map((host) => host.trim())
    .filter(Boolean);
  if (hosts.join('\n') !== settings.replay.allow_hosts.join('\n')) replay.allow_hosts = hosts;
  if (timeout !== undefined && timeout !== settings.replay.timeout_ms) replay.timeout_ms = timeout;
  if (form.resign !== settings.replay.resign) replay.resign = form.resign;
  if (Object.keys(replay).length) input.replay = replay;

  const retention: NonNullable<typeof input.retention> = {};
  if (maxAge > 0 && maxAge !== settings.retention.max_age_days) retention.max_age_days = maxAge;
  if (maxRows !== undefined && maxRows !== settings.retention.max_rows) retention.max_rows = maxRows;
  if (Object.keys(retention).length) input.retention = retention;

  if (form.database_url.trim()) input.database = { url: form.database_url.trim() === 'pglite' ? null : form.database_url.trim() };
  return { input, errors };
}

/** The port this process listens on, and whether config.json says another (a flag, port 0, an edit not applied yet). */
function RunningPort({ label, running, configured }: { label: string; running: number; configured: number }) {
  return (
    <span className={`help running-port${running !== configured ? ' differs' : ''}`} aria-label={`${label}: the running port`}>
      Running on <strong className="mono">:{running}</strong>
      {running !== configured && (configured === 0 ? ' (config.json says 0: any free port)' : ` — config.json says :${configured}, used at the next start`)}
    </span>
  );
}

export function SettingsScreen() {
  const { client, settings, refresh } = useAppData();
  const [form, setForm] = useState<SettingsForm | null>(settings ? formOf(settings) : null);
  const [status, setStatus] = useState<{ tone: 'ok' | 'error'; text: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [confirmClear, setConfirmClear] = useState(false);

  useEffect(() => {
    if (settings && !form) setForm(formOf(settings));
  }, [settings, form]);

  if (!settings || !form) return <div className="page">Loading…</div>;
  const set = <K extends keyof SettingsForm>(key: K, value: SettingsForm[K]) => setForm({ ...form, [key]: value });

  const save = async () => {
    const { input, errors } = changes(settings, form);
    if (errors.length) return setStatus({ tone: 'error', text: errors.join(' ') });
    if (Object.keys(input).length === 0) return setStatus({ tone: 'ok', text: 'Nothing changed.' });
    setSaving(true);
    try {
      const result = await client.updateSettings(input);
      setForm(formOf(result.settings));
      await refresh();
      setStatus({
        tone: 'ok',
        text: result.restart_required.length
          ? `Saved to config.json. Restart switchboard for ${result.restart_required.join(', ')} to take effect.`
          : 'Saved to config.json and applied.',
      });
    } catch (failure) {
      const { message, hint } = failure as { message: string; hint?: string };
      setStatus({ tone: 'error', text: hint ? `${message} — ${hint}` : message });
    } finally {
      setSaving(false);
    }
  };

  const clearEvents = async () => {
    setConfirmClear(false);
    try {
      await client.clearEvents({});
      setStatus({ tone: 'ok', text: 'All events, replays and rejections were deleted.' });
    } catch (failure) {
      setStatus({ tone: 'error', text: (failure as Error).message });
    }
  };

  return (
    <div className="page settings-screen">
      <header className="page-header">
        <h1>Settings</h1>
        <span className="muted small mono">{settings.config_path}</span>
      </header>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <fieldset>
          <legend>Ports</legend>
          <p className="help">The ports in config.json take effect at the next start; the running ones are shown beside each.</p>
          <div className="form-grid">
            <label className="field">
              <span>Receiver port (the one your tunnel exposes)</span>
              <input inputMode="numeric" value={form.receiver_port} onChange={(event) => set('receiver_port', event.target.value)} />
              <RunningPort label="Receiver" running={settings.running.receiver_port} configured={settings.receiver.port} />
            </label>
            <label className="field">
              <span>Control port (UI, API, MCP — loopback only)</span>
              <input inputMode="numeric" value={form.control_port} onChange={(event) => set('control_port', event.target.value)} />
              <RunningPort label="Control" running={settings.running.control_port} configured={settings.control.port} />
            </label>
          </div>
        </fieldset>

        <fieldset>
          <legend>Receiver</legend>
          <div className="form-grid">
            <label className="field">
              <span>Public URL (your tunnel)</span>
              <input type="url" value={form.public_url} placeholder="https://example.ngrok.app" onChange={(event) => set('public_url', event.target.value)} />
            </label>
            <label className="field">
              <span>Max body size (bytes)</span>
              <input inputMode="numeric" value={form.max_body_bytes} onChange={(event) => set('max_body_bytes', event.target.value)} />
            </label>
          </div>
        </fieldset>

        <fieldset>
          <legend>Replay</legend>
          <div className="form-grid">
            <label className="field">
              <span>Default target</span>
              <input type="url" value={form.default_target} placeholder="http://localhost:3000/webhooks" onChange={(event) => set('default_target', event.target.value)} />
            </label>
            <label className="field">
              <span>Timeout (ms)</span>
              <input inputMode="numeric" value={form.timeout_ms} onChange={(event) => set('timeout_ms', event.target.value)} />
            </label>
            <label className="field">
              <span>Allowed hosts (one per line)</span>
              <textarea aria-label="Allowed hosts" rows={3} value={form.allow_hosts} onChange={(event) => set('allow_hosts', event.target.value)} />
              <span className="help">Replays go only to these hosts. Cloud metadata and link-local addresses are always refused.</span>
            </label>
            <label className="check">
              <input type="checkbox" checked={form.resign} onChange={(event) => set('resign', event.target.checked)} /> Re-sign replays by default
            </label>
          </div>
        </fieldset>

        <fieldset>
          <legend>Retention</legend>
          <div className="form-grid">
            <label className="field">
              <span>Max age (days)</span>
              <input inputMode="decimal" value={form.max_age_days} onChange={(event) => set('max_age_days', event.target.value)} />
            </label>
            <label className="field">
              <span>Max events kept</span>
              <input inputMode="numeric" value={form.max_rows} onChange={(event) => set('max_rows', event.target.value)} />
            </label>
          </div>
        </fieldset>

        <fieldset>
          <legend>Database</legend>
          <p>
            {settings.database.kind === 'pglite' ? (
              <>
                Embedded PGlite in <code>{settings.database.data_dir}</code>. Committed rows survive a crash, not a power loss; PostgreSQL is the durable
                option.
              </>
            ) : (
              <>
                PostgreSQL at <code>{settings.database.url}</code>
              </>
            )}
          </p>
          <label className="field wide">
            <span>PostgreSQL URL (restart needed; type “pglite” to go back to the embedded database)</span>
            <input type="password" autoComplete="off" value={form.database_url} placeholder="postgres://user:password@127.0.0.1:5432/switchboard" onChange={(event) => set('database_url', event.target.value)} />
          </label>
        </fieldset>

        {status && (
          <p role={status.tone === 'error' ? 'alert' : 'status'} className={status.tone === 'error' ? 'error-banner' : 'ok-banner'}>
            {status.text}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary-button" disabled={saving}>
            {saving ? 'Saving…' : 'Save settings'}
          </button>
        </div>
      </form>

      <section className="danger-zone" aria-labelledby="danger-heading">
        <h2 id="danger-heading">Event log</h2>
        <p>Delete every stored event, replay and rejection. Providers and settings stay.</p>
        {confirmClear ? (
          <div className="form-actions">
            <button type="button" className="danger-button" onClick={() => void clearEvents()}>
              Yes, delete all events
            </button>
            <button type="button" className="quiet-button" onClick={() => setConfirmClear(false)}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" className="danger-button" onClick={() => setConfirmClear(true)}>
            Clear all events
          </button>
        )}
      </section>
    </div>
  );
}
