import { useMemo, useState } from 'react';
import { payloadBytes, formatBytes, type PayloadEncoding } from '../lib/bytes';
import { decodeFormBody, isFormContentType } from '../lib/form';
import { hexDump } from '../lib/hex';
import { JsonTree, tryParseJson } from './json-tree';
import { Tabs } from './tabs';

type View = 'json' | 'raw' | 'hex' | 'form';
const HEX_PAGE_LINES = 256;

/** A body as a JSON tree, raw text, hex dump, or decoded form fields — whichever fit. */
export function BodyView({ payload, encoding, contentType, label = 'Body' }: { payload: string; encoding: PayloadEncoding; contentType: string | null; label?: string }) {
  const json = useMemo(() => (encoding === 'utf8' ? tryParseJson(payload) : undefined), [payload, encoding]);
  const form = useMemo(() => (encoding === 'utf8' && (isFormContentType(contentType) || !json) ? decodeFormBody(payload) : null), [payload, encoding, contentType, json]);
  const bytes = useMemo(() => payloadBytes(payload, encoding), [payload, encoding]);

  const views: { id: View; label: string }[] = [];
  if (json) views.push({ id: 'json', label: 'JSON' });
  if (form) views.push({ id: 'form', label: 'Form' });
  views.push({ id: 'raw', label: 'Raw' }, { id: 'hex', label: 'Hex' });
  const [chosen, setChosen] = useState<View | null>(null);
  const view = chosen && views.some((v) => v.id === chosen) ? chosen : views[0]!.id;
  const [hexLines, setHexLines] = useState(HEX_PAGE_LINES);

  if (bytes.length === 0) return <p className="muted">Empty body.</p>;

  return (
    <Tabs label={`${label} view`} tabs={views} selected={view} onSelect={setChosen}>
      {view === 'json' && json && <JsonTree value={json.value} label={label} openDepth={3} />}
      {view === 'form' && form && (
        <table className="kv-table" aria-label={`${label} form fields`}>
          <tbody>
            {form.map((field, index) => (
              <tr key={`${field.name}-${index}`}>
                <th scope="row">{field.name}</th>
                <td>{field.json !== undefined ? <JsonTree value={field.json} label={field.name} openDepth={1} /> : <code>{field.value}</code>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {view === 'raw' &&
        (encoding === 'utf8' ? (
          <pre className="raw-body" aria-label={`${label} raw`}>{payload}</pre>
        ) : (
          <p className="muted">Binary body ({formatBytes(bytes.length)}), not valid UTF-8: see the Hex view.</p>
        ))}
      {view === 'hex' && (
        <>
          <pre className="hex-body" aria-label={`${label} hex dump`}>{hexDump(bytes, hexLines).join('\n')}</pre>
          {bytes.length > hexLines * 16 && (
            <button type="button" className="link-button" onClick={() => setHexLines(hexLines + HEX_PAGE_LINES * 4)}>
              Show more ({formatBytes(bytes.length - hexLines * 16)} left)
            </button>
          )}
        </>
      )}
    </Tabs>
  );
}
