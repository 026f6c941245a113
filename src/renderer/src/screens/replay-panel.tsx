import { useEffect, useMemo, useRef, useState } from 'react';
import { replayFailed, type EventDetail, type Replay } from '../../../shared/events';
import { useAppData } from '../app-data';
import { BodyView } from '../components/body-view';
import { parseHeaderLines } from '../lib/headers';
import { defaultReplayTarget } from '../lib/replay-target';
import { REPLAY_TARGET_SOURCES } from '../../../shared/replay-target';
import { formatTime } from '../lib/time';
import { HeaderTable } from '../components/header-table';

/**
 * Replay: target (pre-filled with where a replay of this event goes by default — the provider's
 * forward target, the event's last target, replay.default_target — and saying which), re-sign,
 * optional edited payload and headers, send, what was sent and what came back, and the history
 * of this event's replays. `r` sends with these settings, so the target is on screen before it goes.
 */

/**
 * JSON indented by two spaces, or null when the text is not JSON (form bodies, XML, text). Only
 * whitespace between tokens changes: every value keeps its exact spelling (a 20-digit id, 1.0,
 * a \u escape), which JSON.parse and JSON.stringify would not keep.
 */
export function prettyJson(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
  try {
    JSON.parse(trimmed);
  } catch {
    return null;
  }
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < trimmed.length; i++) {
    const ch = trimmed[i]!;
    if (ch === '"') {
      let end = i + 1;
      while (trimmed[end] !== '"') end += trimmed[end] === '\\' ? 2 : 1;
      out += trimmed.slice(i, end + 1);
      i = end;
    } else if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']';
      let next = i + 1;
      while (/\s/.test(trimmed[next]!)) next++;
      if (trimmed[next] === close) {
        out += ch + close;
        i = next;
      } else {
        depth++;
        out += ch + newline();
      }
    } else if (ch === '}' || ch === ']') {
      depth--;
      out += newline() + ch;
    } else if (ch === ',') {
      out += `,${newline()}`;
    } else if (ch === ':') {
      out += ': ';
    } else if (!/\s/.test(ch)) {
      out += ch;
    }
  }
  return out;
}

/** Header names that carry a provider signature (the core refuses them with re-sign on). */
const SIGNATURE_HEADER = /signature|^x-hub-signature|hmac|^webhook-id$|^webhook-timestamp$/i;
export function ReplayPanel({
  event,
  replays,
  onReplayed,
  pendingReplay,
  onReplayStarted,
}: {
  event: EventDetail;
  replays: Replay[];
  onReplayed: (replay: Replay) => void;
  pendingReplay: boolean;
  onReplayStarted: () => void;
}) {
  const { client, settings, providers } = useAppData();
  const choice = defaultReplayTarget(event.provider, providers, replays, settings);
  const [target, setTarget] = useState(choice?.url ?? '');
  const [resign, setResign] = useState(settings?.replay.resign ?? true);
  const [editing, setEditing] = useState(false);
  // The editor shows JSON pretty-printed; left as shown, the stored bytes are sent unchanged.
  const shownPayload = useMemo(() => (event.payload_encoding === 'utf8' ? prettyJson(event.payload) : null) ?? event.payload, [event.payload, event.payload_encoding]);
  const [payload, setPayload] = useState(shownPayload);
  const [headerText, setHeaderText] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<{ code: string; message: string; hint?: string } | null>(null);
  const [shownId, setShownId] = useState<number | null>(null);
  const [sendingTo, setSendingTo] = useState<string | null>(null);
  const targetTouched = useRef(false);

  // Providers and settings may arrive after the panel, and a replay changes the last target:
  // follow the default unless the user typed a target already.
  useEffect(() => {
    if (!targetTouched.current && choice) setTarget(choice.url);
  }, [choice?.url]);

  const headerParse = parseHeaderLines(headerText);
  const canEditPayload = event.payload_encoding === 'utf8';
  const canResign = event.trust_mode === 'signed';

  const send = async () => {
    if (sending || headerParse.errors.length > 0) return;
    setSending(true);
    setSendingTo(target.trim() || choice?.url || null);
    setError(null);
    try {
      const replay = await client.replayEvent({
        id: event.id,
        ...(target.trim() ? { target_url: target.trim() } : {}),
        resign: canResign && resign,
        ...(editing && canEditPayload && payload !== shownPayload && payload !== event.payload ? { payload } : {}),
        ...(Object.keys(headerParse.headers).length > 0 ? { headers: headerParse.headers } : {}),
        requested_by: 'ui',
      });
      onReplayed(replay);
      setShownId(replay.id);
    } catch (failure) {
      const { code, message, hint } = failure as { code?: string; message: string; hint?: string };
      setError({ code: code ?? 'internal', message, ...(hint ? { hint } : {}) });
    } finally {
      setSending(false);
      setSendingTo(null);
    }
  };

  const sendRef = useRef(send);
  sendRef.current = send;
  useEffect(() => {
    if (!pendingReplay) return;
    onReplayStarted();
    void sendRef.current();
  }, [pendingReplay, onReplayStarted]);

  const shown = replays.find((replay) => replay.id === shownId) ?? null;
  const resigning = canResign && resign;
  const signatureHeader = editing ? Object.keys(headerParse.headers).find((name) => SIGNATURE_HEADER.test(name)) : undefined;
  const typed = target.trim();
  const why = typed === '' || typed === choice?.url ? (choice ? REPLAY_TARGET_SOURCES[choice.source] : null) : REPLAY_TARGET_SOURCES.given;
  const destination = typed || choice?.url || null;
  const turnResignOff = (
    <button type="button" className="quiet-button" onClick={() => setResign(false)}>
      Turn re-sign off
    </button>
  );

  return (
    <section className="replay-panel" aria-labelledby="replay-heading">
      <h3 id="replay-heading" className="visually-hidden">
        Replay
      </h3>
      <form
        className="replay-form"
        aria-label="Replay this event"
        onSubmit={(submit) => {
          submit.preventDefault();
          void send();
        }}
      >
        <label className="field wide">
          <span>Target URL</span>
          <input
            type="url"
            value={target}
            placeholder="http://localhost:3000/webhooks"
            onChange={(change) => {
              targetTouched.current = true;
              setTarget(change.target.value);
            }}
          />
        </label>
        {destination && (
          <p className="replay-destination small" aria-live="polite">
            {sendingTo ? 'Sending to' : 'Sends to'} <span className="mono">{sendingTo ?? destination}</span>
            {why && <span className="muted"> — {why}</span>}
          </p>
        )}
        {event.origin === 'import' && resigning && (
          <div className="warning-banner" role="note">
            <strong>Imported event, never verified here.</strong> The file says it was {event.trust_mode}, but switchboard did not check it. Re-signing gives
            these bytes a valid signature, so your handler will accept them as {event.provider}’s. {turnResignOff}
          </div>
        )}
        <div className="replay-options">
          <label className="check" title={canResign ? 'sign again with the current time so your consumer’s own verification passes' : 'only signed providers are re-signed'}>
            <input type="checkbox" checked={canResign && resign} disabled={!canResign} onChange={(change) => setResign(change.target.checked)} />
            Re-sign {canResign ? '' : '(signed providers only)'}
          </label>
          <label className="check">
            <input type="checkbox" checked={editing} onChange={(change) => setEditing(change.target.checked)} />
            Edit payload and headers
          </label>
        </div>
        {editing && (
          <>
            {canEditPayload ? (
              <label className="field wide">
                <span>Payload</span>
                <textarea aria-label="Payload" className="mono" rows={12} value={payload} onChange={(change) => setPayload(change.target.value)} spellCheck={false} />
                {shownPayload !== event.payload && (
                  <span className="help">Pretty-printed to edit. Left as it is, the stored bytes are sent unchanged; edited, this text is sent (and re-signed).</span>
                )}
              </label>
            ) : (
              <p className="muted">This body is binary; it is replayed as stored.</p>
            )}
            <label className="field wide">
              <span>Extra headers (one “Name: value” per line)</span>
              <textarea aria-label="Extra headers" className="mono" rows={3} value={headerText} onChange={(change) => setHeaderText(change.target.value)} spellCheck={false} aria-invalid={headerParse.errors.length > 0} />
            </label>
            {headerParse.errors.map((message) => (
              <p key={message} className="field-error" role="alert">
                {message}
              </p>
            ))}
            {resigning &&
              (signatureHeader ? (
                <div className="warning-banner" role="alert">
                  <strong>{signatureHeader}</strong> is a signature header, and Re-sign is on: switchboard signs the request itself and refuses to send your
                  signature as well. To send your own signature, turn Re-sign off. {turnResignOff}
                </div>
              ) : (
                <p className="muted small">Re-sign is on: switchboard writes the signature headers. To send your own signature, turn Re-sign off.</p>
              ))}
          </>
        )}
        <div className="form-actions">
          <button type="submit" className="primary-button" disabled={sending} aria-keyshortcuts="r">
            {sending ? 'Sending…' : 'Send replay'}
          </button>
          {!destination && (
            <span className="muted small">No target: type a URL, add a forward rule to {event.provider} on the Providers screen, or set a default in Settings.</span>
          )}
        </div>
      </form>

      {error && (
        <div role="alert" className="error-banner">
          <strong>Replay refused:</strong> {error.message}
          {error.hint && <div className="small">{error.hint}</div>}
          {error.code === 'invalid_argument' && resigning && Object.keys(headerParse.headers).length > 0 && (
            <div className="small">
              To send your own signature header, turn Re-sign off and send again. {turnResignOff}
            </div>
          )}
        </div>
      )}

      {shown && <ReplayResult replay={shown} />}

      {replays.length > 0 && (
        <section aria-labelledby="history-heading" className="replay-history">
          <h4 id="history-heading">History</h4>
          <ul>
            {replays.map((replay) => (
              <li key={replay.id}>
                <button type="button" className={`history-item${replay.id === shownId ? ' active' : ''}`} onClick={() => setShownId(replay.id)} aria-pressed={replay.id === shownId}>
                  <StatusPill replay={replay} />
                  <span className="history-main">
                    <span className="mono small truncate">{replay.target_url}</span>
                    <ReplayMarks replay={replay} />
                  </span>
                  <span className="muted small" title={replay.created_at}>
                    {formatTime(replay.created_at)} · by {replay.requested_by}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
    </section>
  );
}

function StatusPill({ replay }: { replay: Replay }) {
  if (!replay.delivered) return <span className="status-pill bad">not delivered</span>;
  const status = replay.response_status ?? 0;
  const tone = status >= 200 && status < 300 ? 'good' : status >= 300 && status < 400 ? 'warn' : 'bad';
  return <span className={`status-pill ${tone}`}>{status}</span>;
}

/** What was special about a replay: re-signed or not, edited payload, headers set, a warning. */
function ReplayMarks({ replay }: { replay: Replay }) {
  return (
    <span className="replay-marks">
      <span className={`mark${replay.resigned ? ' good' : ''}`}>{replay.resigned ? 're-signed' : 'not re-signed'}</span>
      {replay.payload_edited && <span className="mark warn">edited payload</span>}
      {replay.headers_overridden.length > 0 && (
        <span className="mark warn" title={replay.headers_overridden.join(', ')}>
          header{replay.headers_overridden.length === 1 ? '' : 's'} set: {replay.headers_overridden.join(', ')}
        </span>
      )}
      {replay.warning && (
        <span className="mark bad" title={replay.warning}>
          ⚠ warning
        </span>
      )}
    </span>
  );
}

function ReplayResult({ replay }: { replay: Replay }) {
  const contentType = replay.response_headers?.['content-type'] ?? null;
  return (
    <section className={`replay-result${replayFailed(replay) ? ' failed' : ''}`} aria-label="Replay response" aria-live="polite">
      <p className="replay-summary">
        <StatusPill replay={replay} />{' '}
        {replay.delivered ? (
          <>
            Response <strong>{replay.response_status}</strong> in <strong>{replay.response_ms} ms</strong>
          </>
        ) : (
          <>Not delivered: {replay.error}</>
        )}
        <span className="muted small">
          {' '}
          → {replay.target_url} · by {replay.requested_by}
        </span>
      </p>
      {replay.warning && (
        <p className="warning-banner" role="status">
          <strong>Warning:</strong> {replay.warning}
        </p>
      )}
      <div className="replay-sent">
        <span className="muted small">Sent:</span> <ReplayMarks replay={replay} />
      </div>
      {replay.request_headers && (
        <details>
          <summary>Request headers sent ({Object.keys(replay.request_headers).length})</summary>
          <HeaderTable headers={replay.request_headers} label="Request headers sent" />
        </details>
      )}
      {replay.response_headers && Object.keys(replay.response_headers).length > 0 && (
        <details>
          <summary>Response headers ({Object.keys(replay.response_headers).length})</summary>
          <HeaderTable headers={replay.response_headers} label="Response headers" />
        </details>
      )}
      {replay.response_body !== null && replay.response_body_encoding !== null && (
        <BodyView payload={replay.response_body} encoding={replay.response_body_encoding} contentType={contentType} label="Response body" />
      )}
    </section>
  );
}
