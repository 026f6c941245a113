import { useCallback, useEffect, useState } from 'react';
import type { Activity } from '../../../shared/api';
import type { AppData } from '../app-data';

/** "1,000+" for a count at the API's cap (it counts no further), else the number. */
export function formatCount(count: number, cap: number): string {
  return count >= cap ? `${cap.toLocaleString()}+` : count.toLocaleString();
}

/**
 * The log's activity (getActivity: per-provider last delivery and bounded counts, the events
 * estimate), loaded once and then kept current from live messages — a new event or rejection
 * bumps its provider's count and time — and reloaded after a reconnect or a config change.
 */
export function useActivity({ client, listen }: Pick<AppData, 'client' | 'listen'>): { activity: Activity | null; reload: () => void } {
  const [activity, setActivity] = useState<Activity | null>(null);
  const reload = useCallback(() => {
    client.getActivity({}).then(setActivity, () => undefined);
  }, [client]);
  useEffect(() => {
    reload();
    return listen((message) => {
      if (message === null || message.type === 'config-changed') return reload();
      if (message.type !== 'event' && message.type !== 'rejection') return;
      setActivity((current) => current && bump(current, message.type === 'event' ? { kind: 'event', provider: message.event.provider, at: message.event.received_at } : { kind: 'rejection', provider: message.rejection.provider, at: message.rejection.received_at }));
    });
  }, [listen, reload]);
  return { activity, reload };
}

function bump(activity: Activity, arrival: { kind: 'event' | 'rejection'; provider: string; at: string }): Activity {
  const cap = activity.count_cap;
  const providers = activity.providers.map((row) => {
    if (row.provider !== arrival.provider) return row;
    return arrival.kind === 'event'
      ? { ...row, events: Math.min(cap, row.events + 1), last_event_at: arrival.at }
      : { ...row, rejections: Math.min(cap, row.rejections + 1), last_rejection_at: arrival.at };
  });
  return arrival.kind === 'event'
    ? { ...activity, providers, events_estimate: activity.events_estimate + 1 }
    : { ...activity, providers, rejections: Math.min(cap, activity.rejections + 1) };
}
