import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ApiOutput } from '../../../shared/api';
import { chaosFromSpec } from '../../../shared/delivery-lab';
import type { BodyView, CaseResult, Difference, SuiteRun, SuiteSummary, Verdict } from '../../../shared/suites';
import { chaosMarks, SUITE_MAX_CONCURRENCY } from '../../../shared/suites';
import { useAppData } from '../app-data';
import { paramsFromHash, replaceView } from '../lib/nav';
import { formatTime } from '../lib/time';
import './suites-screen.css';

/**
 * The Suites screen (DESIGN §14): the suites with their last run's verdict counts; a suite's
 * runs and the cases of one run (verdict, status expected → got, ms); a case's differences and
 * both bodies side by side. Run, Accept and Export act on the suite shown; a run in progress
 * shows how far it got. Verdicts and changes are said in words as well as in colour. A run may
 * take a chaos profile (DESIGN §15, the CLI spelling): its run says the profile and seed, its
 * cases whether the handler took the duplicates and what chaos did to each.
 * The address is the view: `#/suites?suite=payments&run=12&case=3`.
 */

const PROGRESS_POLL_MS = 400;

const VERDICT_TEXT: Record<Verdict, string> = { pass: '✓ pass', changed: '≠ changed', failed: '✕ failed', new: '• new' };
const CHANGE_TEXT: Record<Difference['change'], string> = { added: '+ added', removed: '− removed', changed: '~ changed' };

export function VerdictBadge({ verdict }: { verdict: Verdict }) {
  return <span className={`verdict verdict-${verdict}`}>{VERDICT_TEXT[verdict]}</span>;
}

export function VerdictCounts({ run }: { run: Pick<SuiteRun, 'pass' | 'changed' | 'failed' | 'new'> }) {
  const parts = (['pass', 'changed', 'failed', 'new'] as const).filter((verdict) => run[verdict] > 0);
  if (parts.length === 0) return <span className="muted">no cases</span>;
  return (
    <span className="verdict-counts">
      {parts.map((verdict) => (
        <span key={verdict} className={`verdict-count verdict-${verdict}`}>
          {run[verdict]} {verdict}
        </span>
      ))}
    </span>
  );
}

interface View {
  suite: string | null;
  run: number | null;
  case: number | null;
}

function viewFromHash(): View {
  const params = paramsFromHash(window.location.hash);
  const number = (name: string) => {
    const value = Number(params.get(name));
    return Number.isSafeInteger(value) && value > 0 ? value : null;
  };
  return { suite: params.get('suite'), run: number('run'), case: number('case') };
}

export function SuitesScreen() {
  const { client } = useAppData();
  const [suites, setSuites] = useState<SuiteSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [view, setView] = useState<View>(viewFromHash);

  const refresh = useCallback(async () => {
    try {
      setSuites((await client.listSuites({})).suites);
      setError(null);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, [client]);
  useEffect(() => void refresh(), [refresh]);

  useEffect(() => {
    const params = new URLSearchParams();
    if (view.suite) params.set('suite', view.suite);
    if (view.run) params.set('run', String(view.run));
    if (view.case) params.set('case', String(view.case));
    replaceView('suites', params);
  }, [view]);

  const selected = view.suite ?? suites?.[0]?.name ?? null;
  return (
    <div className="page suites-screen">
      <header className="page-header">
        <h1>Suites</h1>
        <p className="muted small">Captured events, re-sent to your handler and compared with the answers you accepted.</p>
      </header>
      {error && (
        <p role="alert" className="error-banner">
          Could not load suites: {error}
        </p>
      )}
      {suites?.length === 0 && (
        <div className="empty-state">
          <h2>No suites yet</h2>
          <p>
            On the Events screen, filter or select the events your handler must keep handling and choose <strong>Save as suite…</strong>. Or from a terminal:{' '}
            <code>switchboard suite create payments --provider stripe</code>.
          </p>
        </div>
      )}
      {suites && suites.length > 0 && (
        <div className="suites-layout">
          <nav aria-label="Suites" className="suite-list">
            <ul>
              {suites.map((suite) => (
                <li key={suite.name}>
                  <button type="button" className="suite-item" aria-current={suite.name === selected ? 'true' : undefined} onClick={() => setView({ suite: suite.name, run: null, case: null })}>
                    <span className="suite-name">{suite.name}</span>
                    <span className="muted small">
                      {suite.cases} case{suite.cases === 1 ? '' : 's'}
                    </span>
                    {suite.last_run ? <VerdictCounts run={suite.last_run} /> : <span className="muted small">never run</span>}
                  </button>
                </li>
              ))}
            </ul>
          </nav>
          {selected && (
            <SuitePanel
              key={selected}
              name={selected}
              view={view.suite === selected ? view : { suite: selected, run: null, case: null }}
              onView={(next) => setView({ ...next, suite: selected })}
              onChanged={refresh}
              onDeleted={() => {
                setView({ suite: null, run: null, case: null });
                void refresh();
              }}
            />
          )}
        </div>
      )}
    </div>
  );
}

type SuiteDetail = ApiOutput<'getSuite'>;
type RunDetail = ApiOutput<'getSuiteRun'>;

function SuitePanel({ name, view, onView, onChanged, onDeleted }: { name: string; view: View; onView: (view: View) => void; onChanged: () => Promise<void>; onDeleted: () => void }) {
  const { client, settings } = useAppData();
  const [detail, setDetail] = useState<SuiteDetail | null>(null);
  const [runs, setRuns] = useState<SuiteRun[]>([]);
  const [run, setRun] = useState<RunDetail | null>(null);
  const [active, setActive] = useState<SuiteRun | null>(null);
  const [target, setTarget] = useState('');
  const [concurrency, setConcurrency] = useState(1);
  const [chaosSpec, setChaosSpec] = useState('');
  const chaos = chaosSpec.trim() === '' ? null : chaosFromSpec(chaosSpec.trim(), 'Chaos');
  const chaosError = chaos && 'error' in chaos ? chaos.error : null;
  const chaosHelpId = useId();
  const [notice, setNotice] = useState<{ kind: 'error' | 'ok'; text: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const headingId = useId();

  const load = useCallback(async () => {
    const [suite, list] = await Promise.all([client.getSuite({ name }), client.listSuiteRuns({ name })]);
    setDetail(suite);
    setRuns(list.runs);
    return list.runs;
  }, [client, name]);

  useEffect(() => {
    load()
      .then((list) => {
        const last = list[0];
        setTarget((current) => current || last?.target_url || settings?.replay.default_target || '');
        if (last?.status === 'running') setActive(last);
      })
      .catch((failure: Error) => setNotice({ kind: 'error', text: failure.message }));
  }, [load, settings]);

  const runId = view.run ?? runs[0]?.id ?? null;
  useEffect(() => {
    if (runId === null) return setRun(null);
    let current = true;
    client
      .getSuiteRun({ id: runId })
      .then((next) => current && setRun(next))
      .catch((failure: Error) => current && setNotice({ kind: 'error', text: failure.message }));
    return () => {
      current = false;
    };
  }, [client, runId, runs]);

  // A run in progress: its row alone, a few times a second, until it ends.
  const finished = useRef<(run: SuiteRun) => Promise<void>>(async () => undefined);
  finished.current = async (next) => {
    await load();
    await onChanged();
    onView({ ...view, run: next.id, case: null });
    if (next.warning) setNotice({ kind: 'error', text: next.warning });
  };
  const activeId = active?.status === 'running' ? active.id : null;
  useEffect(() => {
    if (activeId === null) return;
    const timer = setInterval(() => {
      client
        .getSuiteRun({ id: activeId, cases: false })
        .then(async ({ run: next }) => {
          setActive(next);
          if (next.status !== 'running') await finished.current(next);
        })
        .catch((failure: Error) => setNotice({ kind: 'error', text: failure.message }));
    }, PROGRESS_POLL_MS);
    return () => clearInterval(timer);
  }, [activeId, client]);

  const act = async (what: string, action: () => Promise<void>) => {
    setBusy(what);
    setNotice(null);
    try {
      await action();
    } catch (failure) {
      setNotice({ kind: 'error', text: (failure as Error).message });
    } finally {
      setBusy(null);
    }
  };

  const start = () =>
    act('run', async () => {
      const profile = chaos && 'profile' in chaos ? chaos.profile : undefined;
      const { run: started } = await client.runSuite({ name, ...(target.trim() ? { target_url: target.trim() } : {}), concurrency, ...(profile ? { chaos: profile } : {}) });
      setActive(started);
    });
  const accept = () =>
    act('accept', async () => {
      if (!run) return;
      const result = await client.acceptSuiteRun({ id: run.run.id });
      await load();
      await onChanged();
      const learned = result.learned_ignores.length > 0 ? ` Learned ignores: ${result.learned_ignores.join(', ')}.` : '';
      setNotice({ kind: result.warning ? 'error' : 'ok', text: `Run #${run.run.id} is the expectation now.${learned}${result.warning ? ` ${result.warning}` : ''}` });
    });
  const exportFile = () =>
    act('export', async () => {
      const { filename, ndjson } = await client.exportSuite({ name });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([ndjson], { type: 'application/x-ndjson' }));
      link.download = filename;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      setNotice({ kind: 'ok', text: `Exported ${filename}: commit it beside your handler and run it in CI with switchboard suite run --file.` });
    });
  const remove = () =>
    act('delete', async () => {
      await client.deleteSuite({ name });
      onDeleted();
    });

  const running = active?.status === 'running';
  const suite = detail?.suite;
  const shown = run?.run;
  const canAccept = shown && shown.status === 'done' && !shown.accepted && !running;
  return (
    <section className="suite-panel" aria-labelledby={headingId}>
      <header className="suite-head">
        <h2 id={headingId}>{name}</h2>
        {suite && (
          <span className="muted small">
            {suite.cases} cases · {suite.expectations} with an expectation · {suite.ignore.length} ignore{suite.ignore.length === 1 ? '' : 's'}
          </span>
        )}
      </header>
      <form
        className="suite-controls"
        onSubmit={(event) => {
          event.preventDefault();
          void start();
        }}
      >
        <label className="field target-field">
          <span>Target</span>
          <input value={target} onChange={(event) => setTarget(event.target.value)} placeholder="http://localhost:3000/webhooks" aria-label="Target URL" />
        </label>
        <label className="field">
          <span>Concurrency</span>
          <select value={concurrency} onChange={(event) => setConcurrency(Number(event.target.value))} aria-label="Concurrency">
            {[1, 2, 4, 8, 16, SUITE_MAX_CONCURRENCY].map((n) => (
              <option key={n} value={n}>
                {n === 1 ? '1 (in order)' : n}
              </option>
            ))}
          </select>
        </label>
        <label className="field chaos-field">
          <span>Chaos</span>
          <input
            value={chaosSpec}
            onChange={(event) => setChaosSpec(event.target.value)}
            placeholder="duplicate=1,reorder=3,delay=0-200,seed=7"
            aria-label="Chaos profile"
            aria-invalid={chaosError !== null}
            aria-describedby={chaosHelpId}
            spellCheck={false}
          />
        </label>
        <button type="submit" className="primary-button" disabled={running || busy !== null || chaosError !== null}>
          {running ? 'Running…' : 'Run'}
        </button>
        <button type="button" className="quiet-button" disabled={!canAccept || busy !== null} onClick={() => void accept()} title="Make this run's answers the expectation (each case is sent once more to learn noise)">
          {busy === 'accept' ? 'Accepting…' : shown?.accepted ? 'Accepted' : 'Accept'}
        </button>
        <button type="button" className="quiet-button" disabled={busy !== null} onClick={() => void exportFile()} title="Download the suite file (NDJSON) for git and CI">
          Export
        </button>
        <span className="spacer" />
        {confirmDelete ? (
          <>
            <button type="button" className="danger-button" disabled={running || busy !== null} onClick={() => void remove()}>
              Delete {name} and its runs
            </button>
            <button type="button" className="quiet-button" onClick={() => setConfirmDelete(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" className="quiet-button" disabled={running} onClick={() => setConfirmDelete(true)}>
            Delete…
          </button>
        )}
      </form>
      <p id={chaosHelpId} className={chaosError ? 'field-error small' : 'muted small chaos-help'} role={chaosError ? 'alert' : undefined}>
        {chaosError ?? 'Chaos (optional): duplicate=P (copies, after ms), reorder=N, delay=MIN-MAX ms, seed — a duplicate your handler does not answer 2xx again makes the case changed.'}
      </p>
      {running && active && (
        <div className="run-progress" role="status" aria-live="polite">
          <progress max={active.total} value={active.done} aria-label={`Run ${active.id} progress`} />
          <span>
            Run #{active.id}: {active.done} of {active.total} cases{active.accepted ? '' : suite?.expectations === 0 ? ' — the first run: every case is sent twice to learn noise' : ''}
          </span>
        </div>
      )}
      {notice && (
        <p role={notice.kind === 'error' ? 'alert' : 'status'} className={notice.kind === 'error' ? 'error-banner' : 'ok-banner'}>
          {notice.text}
        </p>
      )}
      {runs.length > 0 && (
        <label className="field run-picker">
          <span>Run</span>
          <select value={runId ?? ''} onChange={(event) => onView({ ...view, run: Number(event.target.value), case: null })} aria-label="Run">
            {runs.map((entry) => (
              <option key={entry.id} value={entry.id}>
                #{entry.id} · {formatTime(entry.started_at)} · {entry.status === 'done' ? `${entry.pass} pass, ${entry.changed} changed, ${entry.failed} failed, ${entry.new} new` : entry.status}
                {entry.accepted ? ' · accepted' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      {runs.length === 0 && !running && <p className="muted">Not run yet. Point Target at your handler and press Run: the first run becomes the expectation.</p>}
      {run && <RunTable run={run} selectedCase={view.case} onCase={(position) => onView({ ...view, run: run.run.id, case: position })} />}
      {run && view.case !== null && <CaseDetailPanel runId={run.run.id} position={view.case} result={run.cases.find((c) => c.case === view.case) ?? null} />}
    </section>
  );
}

function RunTable({ run, selectedCase, onCase }: { run: RunDetail; selectedCase: number | null; onCase: (position: number) => void }) {
  const { run: summary, cases } = run;
  return (
    <section className="run-view" aria-label={`Run ${summary.id}`}>
      <p className="run-summary">
        <VerdictCounts run={summary} /> → <code>{summary.target_url}</code>
        {summary.duration_ms !== null && <span className="muted"> · {summary.duration_ms} ms</span>}
        {summary.concurrency > 1 && <span className="muted"> · {summary.concurrency} at once</span>}
        {summary.accepted && <span className="mark good">expectation</span>}
      </p>
      {summary.chaos !== null && (
        <p className="run-chaos small">
          Chaos: <code>{summary.chaos}</code> <span className="muted">(seed {/seed=(-?\d+)/.exec(summary.chaos)?.[1] ?? '—'}: the same profile repeats every decision)</span>
        </p>
      )}
      {summary.learned_ignores.length > 0 && <p className="muted small">Learned as noise (two sends differed): {summary.learned_ignores.join(', ')}</p>}
      <table className="case-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Provider</th>
            <th scope="col">Type</th>
            <th scope="col">Verdict</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              ms
            </th>
            <th scope="col">Differences</th>
            {summary.chaos !== null && (
              <th scope="col" className="chaos-col">
                Chaos
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {cases.map((result) => (
            <tr key={result.case} className={result.case === selectedCase ? 'selected' : undefined} aria-selected={result.case === selectedCase}>
              <td className="mono">
                <button type="button" className="link-button" onClick={() => onCase(result.case)} aria-label={`Case ${result.case}: ${result.verdict}, show its differences`}>
                  #{result.case}
                </button>
              </td>
              <td>{result.provider}</td>
              <td className="mono truncate" title={result.event_type ?? ''}>
                {result.event_type ?? '—'}
              </td>
              <td>
                <VerdictBadge verdict={result.verdict} />
              </td>
              <td className="mono">{result.verdict === 'failed' ? '—' : `${result.expected_status ?? '—'} → ${result.status ?? '—'}`}</td>
              <td className="num mono">{result.ms ?? ''}</td>
              <td className="small">{caseNote(result)}</td>
              {summary.chaos !== null && (
                <td className="small">
                  <span className="chaos-cell">
                    {result.idempotency && <span className={`mark ${result.idempotency === 'idempotent' ? 'good' : 'bad'}`}>{result.idempotency === 'idempotent' ? '✓ idempotent' : '✕ not idempotent'}</span>}
                    {chaosMarks(result.chaos).map((mark) => (
                      <span key={mark} className="mark">
                        {mark}
                      </span>
                    ))}
                  </span>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function caseNote(result: CaseResult): string {
  if (result.verdict === 'failed') return result.reason ?? 'no answer';
  const parts: string[] = [];
  if (result.diff_count > 0) parts.push(`${result.diff_count}${result.diff_truncated ? '+' : ''} difference${result.diff_count === 1 ? '' : 's'}`);
  const refused = result.chaos?.duplicates.findIndex((status) => status === null || status < 200 || status > 299) ?? -1;
  if (result.idempotency === 'not_idempotent' && refused >= 0) parts.push(`not idempotent: duplicate ${refused + 1} got ${result.chaos!.duplicates[refused] ?? 'no answer'}`);
  if (result.warning) parts.push(`warning: ${result.warning}`);
  return parts.join(' · ');
}

function CaseDetailPanel({ runId, position, result }: { runId: number; position: number; result: CaseResult | null }) {
  const { client } = useAppData();
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    client
      .getSuiteRun({ id: runId, case: position })
      .then((next) => current && setDetail(next))
      .catch((failure: Error) => current && setError(failure.message));
    return () => {
      current = false;
    };
  }, [client, runId, position]);
  const differences = detail?.cases.find((c) => c.case === position)?.diff ?? [];
  const bodies = detail?.detail;
  return (
    <section className="case-detail" aria-label={`Case ${position}`}>
      <h3>
        Case #{position} {result && <VerdictBadge verdict={result.verdict} />}
      </h3>
      {error && (
        <p role="alert" className="error-banner">
          {error}
        </p>
      )}
      {result?.reason && <p className={result.verdict === 'failed' ? 'error-banner' : result.idempotency === 'not_idempotent' ? 'warning-banner small' : 'muted small'}>{result.reason}</p>}
      {result?.warning && <p className="warning-banner small">Warning: {result.warning}</p>}
      {differences.length > 0 && (
        <table className="diff-table" aria-label="Differences">
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Change</th>
              <th scope="col">Expected</th>
              <th scope="col">Got</th>
            </tr>
          </thead>
          <tbody>
            {differences.map((difference, index) => (
              <tr key={index} className={`diff-${difference.change}`}>
                <td className="mono">{difference.path}</td>
                <td>
                  <span className={`change change-${difference.change}`}>{CHANGE_TEXT[difference.change]}</span>
                </td>
                <td className="mono value-before">{'before' in difference ? showValue(difference.before) : <span className="muted">(absent)</span>}</td>
                <td className="mono value-after">{'after' in difference ? showValue(difference.after) : <span className="muted">(absent)</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {result?.diff_truncated && <p className="muted small">Only the first 50 differences are kept.</p>}
      {result && result.verdict === 'pass' && <p className="muted">Same answer as the expectation (after ignores).</p>}
      {bodies && (
        <div className="bodies">
          <BodyPane title="Expected (the accepted answer)" answer={bodies.expected} />
          <BodyPane title="Got" answer={bodies.got} />
        </div>
      )}
    </section>
  );
}

function BodyPane({ title, answer }: { title: string; answer: { status: number; body: BodyView } | null }) {
  return (
    <figure className="body-pane">
      <figcaption>
        {title}
        {answer && <span className="mono"> · {answer.status}</span>}
        {answer?.body.truncated && <span className="muted small"> · first 64 KiB of {answer.body.size} bytes</span>}
      </figcaption>
      {answer ? <pre className="raw-body">{pretty(answer.body)}</pre> : <p className="muted">{title.startsWith('Expected') ? 'No expectation yet (new).' : 'No answer.'}</p>}
    </figure>
  );
}

function pretty(body: BodyView): string {
  if (body.encoding === 'base64') return `(not UTF-8: base64)\n${body.text}`;
  try {
    return JSON.stringify(JSON.parse(body.text), null, 2);
  } catch {
    return body.text;
  }
}

function showValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'undefined');
}
