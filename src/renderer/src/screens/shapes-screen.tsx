import { useEffect, useState } from 'react';
import type { EventTypeShape, ShapeSummary } from '../../../shared/shapes';
import { useAppData } from '../app-data';
import { DriftList, ShapeView, SpecViolations } from '../components/shape-view';
import { paramsFromHash, replaceView } from '../lib/nav';
import { formatTime } from '../lib/time';

/**
 * The Shapes screen (DESIGN §16): every (provider, event type) switchboard has seen, with its
 * events, fields and drift; one type's fields with presence bars, its drift history and the
 * violations of GitHub's published schema, and its generated TypeScript / zod to copy.
 * The address is the view: `#/shapes?provider=github&type=push`.
 */

export function ShapesScreen() {
  const { client } = useAppData();
  const [types, setTypes] = useState<ShapeSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [picked, setPicked] = useState<{ provider: string; event_type: string } | null>(() => {
    const params = paramsFromHash(window.location.hash);
    const provider = params.get('provider');
    const type = params.get('type');
    return provider && type ? { provider, event_type: type } : null;
  });
  const [shape, setShape] = useState<EventTypeShape | null>(null);

  useEffect(() => {
    client.listEventTypes({}).then(
      (result) => setTypes(result.types),
      (failure: Error) => setError(failure.message),
    );
  }, [client]);

  useEffect(() => {
    replaceView('shapes', picked ? new URLSearchParams({ provider: picked.provider, type: picked.event_type }) : new URLSearchParams());
    if (!picked) return setShape(null);
    let current = true;
    client.describeEventType({ provider: picked.provider, event_type: picked.event_type }).then(
      (result) => current && setShape(result),
      (failure: Error) => current && setError(failure.message),
    );
    return () => {
      current = false;
    };
  }, [client, picked]);

  return (
    <section className="shapes-screen" aria-label="Shapes">
      <div className="shapes-list">
        <h2>Shapes</h2>
        {error && <p role="alert">{error}</p>}
        {types === null ? (
          <p className="muted">Loading…</p>
        ) : types.length === 0 ? (
          <p className="muted">No shapes yet. Each event type's shape is inferred from its stored JSON events, a moment after they arrive.</p>
        ) : (
          <ul>
            {types.map((type) => {
              const selected = picked?.provider === type.provider && picked.event_type === type.event_type;
              return (
                <li key={`${type.provider}\u0000${type.event_type}`}>
                  <button type="button" className={selected ? 'selected' : undefined} aria-current={selected ? 'true' : undefined} onClick={() => setPicked({ provider: type.provider, event_type: type.event_type })}>
                    <span className="provider">{type.provider}</span> <span className="mono">{type.event_type}</span>
                    <span className="muted small">
                      {' '}
                      {type.events_seen} events · {type.field_count} fields
                    </span>
                    {type.drift_events > 0 && <span className="drift-badge">DRIFT ×{type.drift_events}</span>}
                  </button>
                </li>
              );
            })}
          </ul>
        )}
      </div>
      <div className="shape-detail">
        {!shape ? (
          <p className="muted">{picked ? 'Loading…' : 'Pick an event type to see its fields, drift and generated types.'}</p>
        ) : (
          <>
            <h3>
              {shape.provider} <span className="mono">{shape.event_type}</span> <span className="muted small">→ {shape.types.root}</span>
            </h3>
            {shape.spec_violations && <SpecViolations violations={shape.spec_violations.violations} label={`GitHub's published schema: event #${shape.spec_violations.event_id} breaks it`} />}
            {shape.drift.length > 0 && (
              <div className="drift-history">
                <h4>Drift history</h4>
                <ul>
                  {shape.drift.map((entry) => (
                    <li key={entry.event_id}>
                      <span className="mono">#{entry.event_id}</span> <span className="muted small">{formatTime(entry.received_at)}</span>
                      <DriftList marks={entry.changes} />
                    </li>
                  ))}
                </ul>
              </div>
            )}
            <ShapeView shape={shape} />
          </>
        )}
      </div>
    </section>
  );
}
