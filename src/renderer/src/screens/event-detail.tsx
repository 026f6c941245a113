import { useEffect, useState } from 'react';
import type { EventTypeShape } from '../../../shared/shapes';
import type { ApiOutput } from '../../../shared/api';
import type { EventDetail, Replay } from '../../../shared/events';
import { useAppData } from '../app-data';
import { BodyView } from '../components/body-view';
import { CopyButton } from '../components/copy-button';
import { Tabs } from '../components/tabs';
import { DriftList, ShapeView, SpecViolations } from '../components/shape-view';
import { EventTrustBadge } from '../components/trust-badge';
import { formatBytes } from '../lib/bytes';
import { buildCurl } from '../lib/curl';
import { defaultReplayTarget } from '../lib/replay-target';
import { eventTrust } from '../lib/trust';
import { formatTime } from '../lib/time';
import { ReplayPanel } from './replay-panel';
import { HeaderTable } from '../components/header-table';
import { OriginBadge } from '../components/send-test-event';
import { AttemptTimeline } from '../components/attempts';

export function EventDetailPane({
  eventId,
  pendingReplay,
  onReplayStarted,
  onClose,
}: {
  eventId: number;
  pendingReplay: boolean;
  onReplayStarted: () => void;
  onClose: () => void;
}) {
  const { client, providers, settings, listen } = useAppData();
  const [detail, setDetail] = useState<ApiOutput<'getEvent'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [replays, setReplays] = useState<Replay[]>([]);
  /** Body, headers and replay side by side as tabs: a replay's result shows without scrolling past the payload. */
  const [section, setSection] = useState<'body' | 'headers' | 'replay' | 'shape'>(pendingReplay ? 'replay' : 'body');
  useEffect(() => {
    if (pendingReplay) setSection('replay');
  }, [pendingReplay]);

  useEffect(() => {
    let current = true;
    client.getEvent({ id: eventId }).then(
      (result) => {
        if (!current) return;
        setDetail(result);
        setReplays(result.replays);
      },
      (failure: Error) => current && setError(failure.message),
    );
    return () => {
      current = false;
    };
  }, [client, eventId]);

  // Replays by forward rules, MCP or another window show up here too.
  useEffect(
    () =>
      listen((message) => {
        if (message?.type !== 'replay' || message.replay.event_id !== eventId) return;
        setReplays((list) => (list.some((replay) => replay.id === message.replay.id) ? list : [message.replay, ...list]));
      }),
    [listen, eventId],
  );

  const event = detail?.event;
  const provider = providers?.find((view) => view.status.name === event?.provider);
  // Where a replay would go (the provider's own handler first), so the command hits the same one.
  const curlTarget = event ? (defaultReplayTarget(event.provider, providers, replays, settings)?.url ?? provider?.receive_url ?? null) : null;
  const trust = event ? eventTrust(event, provider?.status.kind) : null;

  return (
    <aside className="detail-pane" aria-label={`Event ${eventId}`}>
      <header className="detail-header">
        <h2>
          <span className="muted mono">#{eventId}</span> {event ? (event.event_type ?? 'untyped event') : error ? 'Not available' : 'Loading…'}
          {event && <OriginBadge origin={event.origin} />}
        </h2>
        <button type="button" className="icon-button" aria-label="Close event detail" onClick={onClose}>
          ×
        </button>
      </header>
      {error && (
        <p role="alert" className="error-banner">
          {error}
        </p>
      )}
      {event && (
        <div className="detail-body">
          <section className={`verify-card trust-${trust!.tone}`} aria-label="Verification">
            <EventTrustBadge event={event} />
            <div>
              <p className="verify-line">
                <strong>{trust!.verdict}</strong> — {trust!.explained}
              </p>
              {event.verify_detail && <p className="mono small">{event.verify_detail}</p>}
            </div>
          </section>

          <dl className="meta-grid">
            <dt>Provider</dt>
            <dd>{event.provider}</dd>
            <dt>Received</dt>
            <dd className="mono" title={event.received_at}>
              {formatTime(event.received_at)}
            </dd>
            <dt>Delivery id</dt>
            <dd className="mono">{event.external_id ?? '—'}</dd>
            <dt>Content type</dt>
            <dd className="mono">{event.content_type ?? '—'}</dd>
            <dt>Size</dt>
            <dd>{formatBytes(event.payload_size)}</dd>
            <dt>Source</dt>
            <dd className="mono">{event.source_ip ?? '—'}</dd>
          </dl>

          <AttemptTimeline log={event.attempt_log} attempts={event.attempts} />

          <Tabs
            label="Event sections"
            className="sections"
            tabs={[
              { id: 'body', label: 'Body' },
              { id: 'headers', label: `Headers (${Object.keys(event.headers).length})` },
              { id: 'replay', label: replays.length > 0 ? `Replay (${replays.length})` : 'Replay' },
              { id: 'shape', label: event.drift.length > 0 ? 'Shape · DRIFT' : 'Shape' },
            ]}
            selected={section}
            onSelect={setSection}
          >
            <div hidden={section !== 'body'}>
              <div className="section-head">
                <h3 className="visually-hidden">Body</h3>
                {curlTarget && (
                  <CopyButton
                    label="Copy as cURL"
                    idleText="Copy as cURL"
                    text={buildCurl({ url: curlTarget, headers: event.headers, payload: event.payload, encoding: event.payload_encoding })}
                  />
                )}
                {curlTarget && event.trust_mode === 'signed' && (
                  <CopyButton
                    label={event.origin === 'import' ? 'Copy as cURL, re-signed: a fresh signature over imported bytes switchboard never verified' : 'Copy as cURL, re-signed with a fresh signature'}
                    idleText={event.origin === 'import' ? 'Copy as cURL (re-signed, unverified import)' : 'Copy as cURL (re-signed)'}
                    text={async () => {
                      // What a replay to this target would send, signed now; nothing is sent.
                      const prepared = await client.prepareReplay({ id: event.id, target_url: curlTarget, resign: true });
                      return buildCurl({ url: prepared.target_url, headers: prepared.headers, payload: prepared.payload, encoding: prepared.payload_encoding });
                    }}
                  />
                )}
                {curlTarget && <span className="muted small mono truncate" title="where the cURL command sends it: the same target a replay would use">→ {curlTarget}</span>}
              </div>
              <BodyView payload={event.payload} encoding={event.payload_encoding} contentType={event.content_type} />
            </div>
            <div hidden={section !== 'headers'}>
              <HeaderTable headers={event.headers} label="Request headers" />
            </div>
            <div hidden={section !== 'shape'}>{section === 'shape' && <ShapeTab event={event} />}</div>
            {/* Always mounted: its settings are what `r` sends, whichever tab is shown. */}
            <div hidden={section !== 'replay'}>
              <ReplayPanel
                event={event}
                replays={replays}
                onReplayed={(replay) => {
                  setReplays((list) => (list.some((r) => r.id === replay.id) ? list : [replay, ...list]));
                  setSection('replay');
                }}
                pendingReplay={pendingReplay}
                onReplayStarted={onReplayStarted}
              />
            </div>
          </Tabs>
        </div>
      )}
    </aside>
  );
}

/** The detail's Shape tab (DESIGN §16): this event's drift and spec violations, and its type's shape. */
function ShapeTab({ event }: { event: EventDetail }) {
  const { client } = useAppData();
  const [shape, setShape] = useState<EventTypeShape | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!event.event_type) return setProblem('This event has no type, so it has no shape.');
    let current = true;
    client.describeEventType({ provider: event.provider, event_type: event.event_type }).then(
      (result) => current && setShape(result),
      (failure: Error) => current && setProblem(failure.message),
    );
    return () => {
      current = false;
    };
  }, [client, event.provider, event.event_type]);
  return (
    <div className="shape-tab">
      {event.drift.length > 0 ? (
        <div className="drift-here">
          <h4>This event drifts from its type&apos;s shape</h4>
          <DriftList marks={event.drift} />
        </div>
      ) : (
        <p className="muted small">No drift: this event fits its type&apos;s shape (drift is judged once a type has 20 events).</p>
      )}
      {event.spec_violations && <SpecViolations violations={event.spec_violations} label="Breaks GitHub's published schema" />}
      {problem && <p className="muted">{problem}</p>}
      {shape && <ShapeView shape={shape} drift={event.drift} />}
    </div>
  );
}
