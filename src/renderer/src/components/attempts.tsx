import type { Attempt } from '../../../shared/events';

/**
 * Attempts per delivery identity (DESIGN §15): the list's `×3` mark, and the detail's timeline of
 * what the provider was answered each time (and by which answer rule).
 */

export function AttemptsMark({ attempts }: { attempts: number }) {
  if (attempts <= 1) return null;
  return (
    <span className="attempts-mark" title={`delivered ${attempts} times by the provider (the same delivery id): see the attempt log`} aria-label={`${attempts} attempts`}>
      ×{attempts}
    </span>
  );
}

export function AttemptTimeline({ log, attempts }: { log: readonly Attempt[]; attempts: number }) {
  if (attempts <= 1 && log.every((entry) => entry.rule === null)) return null;
  return (
    <section className="attempt-timeline" aria-label="Attempts">
      <h3>
        Attempts <span className="muted">({attempts})</span>
      </h3>
      <ol>
        {log.map((entry) => {
          const ok = entry.status < 300;
          return (
            <li key={entry.attempt} className={ok ? 'ok' : 'failed'}>
              <span className="mono">#{entry.attempt}</span>
              <span className="mono muted" title={entry.at}>
                {entry.at.slice(11, 19)}
              </span>
              <span className={`status mono ${ok ? 'ok' : 'failed'}`}>{entry.status}</span>
              <span className="muted">
                {entry.rule === null ? 'normal answer' : `by answer rule ${entry.rule}`}
                {entry.delay_ms > 0 ? `, after ${entry.delay_ms} ms` : ''}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
