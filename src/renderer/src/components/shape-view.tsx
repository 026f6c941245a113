import type { DriftMark, EventTypeShape, SpecViolation } from '../../../shared/shapes';
import { CopyButton } from './copy-button';

/**
 * A type's shape (DESIGN §16) as the Shapes screen and the detail's Shape tab show it: fields
 * with presence bars (the share is said in numbers too), types, masked examples, this event's
 * drift marks beside its fields, and Copy TypeScript / Copy zod.
 */

const CHANGE_TEXT: Record<DriftMark['change'], string> = { added: '+ added', missing: '− missing', type_changed: '~ type changed' };

export function DriftBadge() {
  return (
    <span className="drift-badge" title="this event differs from its type's usual shape (Shape tab)">
      DRIFT
    </span>
  );
}

export function DriftList({ marks }: { marks: DriftMark[] }) {
  if (marks.length === 0) return null;
  return (
    <ul className="drift-list" aria-label="Drift">
      {marks.map((mark) => (
        <li key={`${mark.change}:${mark.path}`}>
          <span className={`drift-change drift-${mark.change}`}>{CHANGE_TEXT[mark.change]}</span> <code>{mark.path}</code>
          {mark.was !== undefined && <span className="muted"> was {mark.was}</span>}
          {mark.now !== undefined && <span className="muted"> now {mark.now}</span>}
        </li>
      ))}
    </ul>
  );
}

export function SpecViolations({ violations, label }: { violations: SpecViolation[]; label: string }) {
  if (violations.length === 0) return null;
  return (
    <div className="spec-violations">
      <h4>{label}</h4>
      <ul>
        {violations.map((violation, index) => (
          <li key={index}>
            <code>{violation.path}</code> {violation.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function ShapeView({ shape, drift = [] }: { shape: EventTypeShape; drift?: DriftMark[] }) {
  const marks = new Map(drift.map((mark) => [mark.path, mark]));
  return (
    <div className="shape-view">
      <div className="section-head">
        <span className="muted small">
          {shape.events_seen} events · {shape.field_count} fields{shape.paths_truncated ? ' (2,000-path bound reached)' : ''}
          {shape.skipped_not_json + shape.skipped_too_large > 0 ? ` · ${shape.skipped_not_json} not JSON, ${shape.skipped_too_large} too large, skipped` : ''}
        </span>
        <CopyButton label={`Copy TypeScript (${shape.types.root})`} idleText="Copy TypeScript" text={shape.types.typescript} />
        <CopyButton label={`Copy zod (${shape.types.root}Schema)`} idleText="Copy zod" text={shape.types.zod} />
      </div>
      <table className="shape-fields">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Presence</th>
            <th scope="col">Types</th>
            <th scope="col">Example</th>
          </tr>
        </thead>
        <tbody>
          {shape.fields.map((field) => {
            const mark = marks.get(field.path);
            const percent = Math.round(field.presence * 1000) / 10;
            return (
              <tr key={field.path} className={mark ? 'drifted' : undefined}>
                <td className="mono path" title={field.path}>
                  {field.path}
                  {mark && <span className={`drift-change drift-${mark.change}`}> {CHANGE_TEXT[mark.change]}</span>}
                </td>
                <td className="presence">
                  <span className="presence-bar" aria-hidden="true">
                    <span style={{ width: `${percent}%` }} />
                  </span>
                  <span className="mono small">{percent} %</span>
                  {!field.required && <span className="muted small"> optional</span>}
                </td>
                <td className="mono small">{field.types.join(' | ')}</td>
                <td className="mono small muted example" title={field.example}>
                  {field.example ?? ''}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {shape.fields_truncated && <p className="muted small">More fields than shown.</p>}
    </div>
  );
}
