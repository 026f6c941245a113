import { useState } from 'react';

/**
 * A collapsible JSON tree. Children render only when their node is open, and long arrays and
 * objects are shown a page at a time, so a multi-megabyte payload opens instantly.
 */

export const JSON_TREE_PAGE = 100;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function JsonTree({ value, label = 'payload', openDepth = 2 }: { value: unknown; label?: string; openDepth?: number }) {
  return (
    <ul className="json-tree" aria-label={`${label} as a JSON tree`}>
      <JsonNode name={null} value={value as Json} depth={0} openDepth={openDepth} />
    </ul>
  );
}

function JsonNode({ name, value, depth, openDepth }: { name: string | null; value: Json; depth: number; openDepth: number }) {
  const isContainer = value !== null && typeof value === 'object';
  const [open, setOpen] = useState(depth < openDepth);
  const [shown, setShown] = useState(JSON_TREE_PAGE);
  const key = name === null ? null : <span className="json-key">{name}</span>;

  if (!isContainer) {
    return (
      <li className="json-leaf">
        {key}
        {key && <span className="json-colon">: </span>}
        <JsonScalar value={value} />
      </li>
    );
  }

  const entries: [string, Json][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  const summary = Array.isArray(value) ? `${entries.length} item${entries.length === 1 ? '' : 's'}` : `${entries.length} key${entries.length === 1 ? '' : 's'}`;
  return (
    <li className="json-branch">
      <button
        type="button"
        className="json-toggle"
        aria-expanded={open}
        aria-label={`${open ? 'Collapse' : 'Expand'} ${name ?? 'root'} (${summary})`}
        onClick={() => setOpen(!open)}
      >
        <span className="json-caret" aria-hidden="true">{open ? '▾' : '▸'}</span>
        {key}
        {key && <span className="json-colon">: </span>}
        <span className="json-bracket">{brackets[0]}</span>
        {!open && (
          <>
            <span className="json-summary"> {summary} </span>
            <span className="json-bracket">{brackets[1]}</span>
          </>
        )}
      </button>
      {open && (
        <>
          <ul>
            {entries.slice(0, shown).map(([childName, child]) => (
              <JsonNode key={childName} name={childName} value={child} depth={depth + 1} openDepth={openDepth} />
            ))}
            {entries.length > shown && (
              <li>
                <button type="button" className="link-button" onClick={() => setShown(shown + JSON_TREE_PAGE)}>
                  Show {Math.min(JSON_TREE_PAGE, entries.length - shown)} more of {entries.length - shown}
                </button>
              </li>
            )}
          </ul>
          <span className="json-bracket json-close">{brackets[1]}</span>
        </>
      )}
    </li>
  );
}

function JsonScalar({ value }: { value: null | boolean | number | string }) {
  if (value === null) return <span className="json-null">null</span>;
  if (typeof value === 'string') return <span className="json-string">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span className="json-number">{String(value)}</span>;
  return <span className="json-boolean">{String(value)}</span>;
}

/** The payload parsed as JSON, or undefined when it is not JSON. */
export function tryParseJson(text: string): { value: unknown } | undefined {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[' && start !== '"') return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}
