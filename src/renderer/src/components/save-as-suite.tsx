import { useId, useState } from 'react';
import { SUITE_DEFAULT_CASES, SUITE_MAX_CASES, SUITE_NAME_PATTERN } from '../../../shared/suites';
import { useAppData } from '../app-data';
import { filtersToQuery, type EventFilters } from '../lib/filters';
import { replaceView } from '../lib/nav';
import { useNavigate } from '../navigation';
import '../screens/suites-screen.css';

interface Saved {
  name: string;
  cases: number;
  replaced: boolean;
}

/**
 * "Save as suite…" on the Events screen (DESIGN §14): the events the current filter selects
 * (oldest first, up to a limit) or the events selected in the list, copied into a suite.
 * Not a <form>: it sits inside the Events screen's filter form, and forms do not nest.
 */
export function SaveAsSuite({ filters, selected, onSaved }: { filters: EventFilters; selected: readonly number[]; onSaved: () => void }) {
  const { client } = useAppData();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [source, setSource] = useState<'filter' | 'selected'>('filter');
  const [limit, setLimit] = useState(SUITE_DEFAULT_CASES);
  const [state, setState] = useState<{ busy: boolean; error?: string; saved?: Saved }>({ busy: false });
  const id = useId();
  const from = selected.length > 0 ? source : 'filter';
  const validName = SUITE_NAME_PATTERN.test(name);

  const save = async () => {
    if (!validName) return;
    setState({ busy: true });
    try {
      const input = from === 'selected' ? { name, event_ids: [...selected].sort((a, b) => a - b) } : { name, filter: { ...filtersToQuery(filters), limit } };
      const { suite, created } = await client.saveSuite(input);
      setState({ busy: false, saved: { name: suite.name, cases: suite.cases, replaced: !created } });
      onSaved();
    } catch (error) {
      setState({ busy: false, error: (error as Error).message });
    }
  };

  return (
    <span className="save-as-suite-anchor">
      <button
        type="button"
        className="quiet-button"
        aria-expanded={open}
        title="Keep these events as a regression suite for your handler"
        onClick={() => {
          setOpen(!open);
          setSource(selected.length > 0 ? 'selected' : 'filter');
          setState({ busy: false });
        }}
      >
        Save as suite…
      </button>
      {open && (
        <div className="save-as-suite" role="dialog" aria-label="Save as suite">
          {state.saved ? <SavedNote saved={state.saved} onOpen={() => openSuite(state.saved!.name)} onClose={() => setOpen(false)} /> : form()}
        </div>
      )}
    </span>
  );

  function openSuite(suite: string) {
    navigate('suites');
    replaceView('suites', new URLSearchParams({ suite }));
  }

  function form() {
    return (
      <>
        <label className="field">
          <span>Suite name</span>
          <input
            value={name}
            placeholder="payments"
            aria-invalid={name !== '' && !validName}
            aria-describedby={`${id}-name-help`}
            autoFocus
            onChange={(event) => setName(event.target.value.toLowerCase())}
            onKeyDown={(event) => {
              if (event.key !== 'Enter') return;
              event.preventDefault();
              void save();
            }}
          />
        </label>
        <p id={`${id}-name-help`} className="help">
          Lowercase letters, digits, “.”, “-” or “_”. A suite of that name gets these cases instead (its expectations go).
        </p>
        <fieldset>
          <legend>Cases</legend>
          <label className="check">
            <input type="radio" name={`${id}-source`} checked={from === 'filter'} onChange={() => setSource('filter')} />
            The events the current filter selects, oldest first, at most
            <input
              type="number"
              className="limit-input"
              min={1}
              max={SUITE_MAX_CASES}
              value={limit}
              aria-label="At most this many events"
              onChange={(event) => setLimit(Math.min(SUITE_MAX_CASES, Math.max(1, Number(event.target.value) || 1)))}
            />
          </label>
          <label className="check">
            <input type="radio" name={`${id}-source`} checked={from === 'selected'} disabled={selected.length === 0} onChange={() => setSource('selected')} />
            The {selected.length} selected event{selected.length === 1 ? '' : 's'}
            {selected.length === 0 && <span className="muted small">(select rows with Ctrl/⌘-click or x)</span>}
          </label>
        </fieldset>
        {state.error && (
          <p role="alert" className="error-banner">
            {state.error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="primary-button" disabled={!validName || state.busy} onClick={() => void save()}>
            {state.busy ? 'Saving…' : 'Save suite'}
          </button>
          <button type="button" className="quiet-button" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </>
    );
  }
}

function SavedNote({ saved, onOpen, onClose }: { saved: Saved; onOpen: () => void; onClose: () => void }) {
  return (
    <p role="status">
      {saved.replaced ? 'Replaced the cases of' : 'Saved'} suite <strong>{saved.name}</strong>: {saved.cases} case{saved.cases === 1 ? '' : 's'}.{' '}
      <button type="button" className="link-button" onClick={onOpen}>
        Open it in Suites
      </button>{' '}
      <button type="button" className="quiet-button" onClick={onClose}>
        Close
      </button>
    </p>
  );
}
