import { useEffect, useId, useState } from 'react';
import type { TestEventInfo } from '../../../shared/api';
import { useAppData } from '../app-data';

/**
 * "Send test event" (DESIGN §11): pick a provider (unless given) and one of its kind's test
 * events; switchboard builds, signs and delivers it through its own receiver, so it shows up
 * in the Events list as TEST like any delivery would.
 */
export function SendTestEvent({ provider, providers }: { provider?: string; providers?: string[] }) {
  const { client } = useAppData();
  const id = useId();
  const [chosen, setChosen] = useState(provider ?? providers?.[0] ?? '');
  const [catalog, setCatalog] = useState<TestEventInfo[]>([]);
  const [eventType, setEventType] = useState('');
  const [state, setState] = useState<{ busy: boolean; result?: string; error?: string }>({ busy: false });

  useEffect(() => {
    if (!chosen) return;
    let live = true;
    client
      .listTestEvents({ provider: chosen })
      .then(({ test_events }) => {
        if (!live) return;
        setCatalog(test_events);
        setEventType(test_events[0]?.event_type ?? '');
      })
      .catch((error: Error) => live && setState({ busy: false, error: error.message }));
    return () => {
      live = false;
    };
  }, [client, chosen]);

  const send = async () => {
    setState({ busy: true });
    try {
      const { event } = await client.sendTestEvent({ provider: chosen, event_type: eventType });
      setState({ busy: false, result: `Sent: #${event.id} ${event.event_type ?? ''} (${event.verified ? 'verified' : event.trust_mode})` });
    } catch (error) {
      setState({ busy: false, error: (error as Error).message });
    }
  };

  const description = catalog.find((entry) => entry.event_type === eventType)?.description;
  return (
    <div className="send-test-event" role="group" aria-label={`Send a test event${provider ? ` to ${provider}` : ''}`}>
      {!provider && providers && (
        <label className="field">
          <span className="visually-hidden">Test event provider</span>
          <select aria-label="Test event provider" value={chosen} onChange={(event) => setChosen(event.target.value)}>
            {providers.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="field">
        <span className="visually-hidden">Test event type</span>
        <select id={id} aria-label={`Test event type${provider ? ` for ${provider}` : ''}`} value={eventType} onChange={(event) => setEventType(event.target.value)}>
          {catalog.map((entry) => (
            <option key={entry.event_type} value={entry.event_type} title={entry.description}>
              {entry.event_type}
            </option>
          ))}
        </select>
      </label>
      <button type="button" className="quiet-button" disabled={state.busy || !eventType} onClick={() => void send()}>
        {state.busy ? 'Sending…' : 'Send test event'}
      </button>
      {description && <span className="muted small">{description}</span>}
      <span aria-live="polite" className="small">
        {state.result}
      </span>
      {state.error && (
        <p role="alert" className="error-banner">
          {state.error}
        </p>
      )}
    </div>
  );
}

/** TEST or IMPORT next to an event's type, so nobody mistakes it for the provider's own. */
export function OriginBadge({ origin }: { origin: 'provider' | 'test' | 'import' }) {
  if (origin === 'provider') return null;
  return (
    <span className={`origin-badge origin-${origin}`} title={origin === 'test' ? 'a test event made by switchboard, not sent by the provider' : 'imported from an export file'}>
      {origin === 'test' ? 'TEST' : 'IMPORT'}
    </span>
  );
}
