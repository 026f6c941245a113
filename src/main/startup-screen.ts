import type { StartupPhase } from '../core/startup-phase.js';
import { failureTitle, type StartupFailure } from './error-screen.js';

/**
 * What the window shows from the moment it opens until the core is up: the step the core is on
 * ("Opening the database…", or on a first start "Creating the database in <dir> (first start
 * only)…"), or, when the start failed, the problem, the fix, and buttons to try again or quit.
 *
 * A local page served on app:// like the UI (app-protocol.ts), under the same CSP and in the
 * same sandboxed window: its one script is a file of ours (no inline script). It learns the
 * state by polling `startup/state` and asks for a retry or a quit by POSTing `startup/retry` /
 * `startup/quit` with a custom header; no IPC and nothing in the preload is added for it. The
 * header makes any cross-origin POST need a CORS preflight, which this handler never answers,
 * so only a page of our own origin can press the buttons (and a retry only does something
 * after a failed start).
 */

export const STARTUP_PAGE = '/startup.html';
const STARTUP_SCRIPT = '/startup.js';
const STATE = '/startup/state';
const ACTION_HEADER = 'x-switchboard-startup';
const ACTIONS = ['retry', 'quit'] as const;

/** What the page shows; the page's script copies these texts into place, nothing more. */
export type StartupView =
  | { state: 'starting'; step: StartupPhase['step'] | null; title: string; detail: string }
  | { state: 'failed'; title: string; message: string; hint: string | null; code: string; config_path: string }
  | { state: 'ready' };

export interface StartupScreenOptions {
  dataDir: string;
  configPath: string;
  retry: () => void;
  quit: () => void;
}

/** A response for app-protocol.ts to send (it adds the CSP and the other headers). */
export interface StartupResponse {
  status: number;
  type: string;
  body: string | null;
}

export interface StartupScreen {
  /** A (new) start begins. */
  starting(): void;
  /** The core reported a step (SwitchboardOptions.onStartupPhase). */
  phase(phase: StartupPhase): void;
  failed(failure: StartupFailure): void;
  ready(): void;
  view(): StartupView;
  /** The page, its script, its state and its actions; null for any other request. */
  respond(request: Request): StartupResponse | null;
}

export function createStartupScreen({ dataDir, configPath, retry, quit }: StartupScreenOptions): StartupScreen {
  let current: StartupView = startingView(null, '', dataDir);
  const actions: Record<(typeof ACTIONS)[number], () => boolean> = {
    // Only a failed start can be tried again: a click during a start must not begin a second one.
    retry: () => current.state === 'failed' && (retry(), true),
    quit: () => current.state !== 'ready' && (quit(), true),
  };
  return {
    starting: () => (current = startingView(null, '', dataDir)),
    phase: ({ step, message }) => (current = startingView(step, message, dataDir)),
    failed: (failure) => {
      current = { state: 'failed', title: failure.title ?? failureTitle(failure.code), message: failure.message, hint: failure.hint ?? null, code: failure.code, config_path: configPath };
    },
    ready: () => (current = { state: 'ready' }),
    view: () => current,
    respond(request) {
      const { pathname } = new URL(request.url);
      const read = request.method === 'GET' || request.method === 'HEAD';
      if (pathname === STARTUP_PAGE) return read ? { status: 200, type: 'text/html; charset=utf-8', body: startupPageHtml(current) } : notAllowed;
      if (pathname === STARTUP_SCRIPT) return read ? { status: 200, type: 'text/javascript; charset=utf-8', body: PAGE_SCRIPT } : notAllowed;
      if (pathname === STATE) return read ? { status: 200, type: 'application/json', body: JSON.stringify(current) } : notAllowed;
      const action = ACTIONS.find((name) => pathname === `/startup/${name}`);
      if (action === undefined) return null;
      if (request.method !== 'POST' || request.headers.get(ACTION_HEADER) !== action) return notAllowed;
      return actions[action]() ? { status: 204, type: 'text/plain', body: null } : { status: 409, type: 'text/plain', body: `nothing to ${action} now` };
    },
  };
}

const notAllowed: StartupResponse = { status: 405, type: 'text/plain', body: 'method not allowed' };

const TITLES: Record<StartupPhase['step'], (dataDir: string) => string> = {
  'creating-database': (dataDir) => `Creating the database in ${dataDir} (first start only)…`,
  'opening-database': () => 'Opening the database…',
  migrating: () => 'Updating the database…',
  'applying-journal': () => 'Storing the events received before the last stop…',
  'starting-servers': () => 'Starting the receiver…',
};

/** The core's own line is shown under the title only where it adds something (which migrations). */
function startingView(step: StartupPhase['step'] | null, message: string, dataDir: string): StartupView {
  return { state: 'starting', step, title: step ? TITLES[step](dataDir) : 'Starting switchboard…', detail: step === 'migrating' || step === 'applying-journal' ? message : '' };
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The page as it is now; the script keeps it current from then on. */
export function startupPageHtml(view: StartupView): string {
  const starting = view.state === 'starting' ? view : { title: 'Starting switchboard…', detail: '' };
  const failed = view.state === 'failed' ? view : { title: '', message: '', hint: null, code: '', config_path: '' };
  const hidden = (shown: boolean) => (shown ? '' : ' hidden');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>switchboard</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; padding: 48px; color: #1f2328; background: #fff; }
  [hidden] { display: none !important; }
  .starting { display: flex; gap: 14px; align-items: flex-start; max-width: 640px; margin: 22vh auto 0; }
  .starting h1 { font-size: 17px; }
  .spinner { flex: none; width: 16px; height: 16px; margin-top: 3px; border: 3px solid #8b949e55; border-top-color: #8b949e; border-radius: 50%; animation: spin 0.9s linear infinite; }
  @keyframes spin { to { transform: rotate(360deg); } }
  @media (prefers-reduced-motion: reduce) { .spinner { animation: none; } }
  h1 { font-size: 20px; font-weight: 600; margin: 0 0 4px; overflow-wrap: anywhere; }
  .failed h1 { font-size: 22px; margin-bottom: 16px; }
  h2 { font-size: 15px; margin: 24px 0 4px; }
  .detail, .code, .footer { color: #8b949e; font-size: 13px; overflow-wrap: anywhere; }
  .message { font-family: ui-monospace, monospace; white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; padding: 12px; border-radius: 6px; }
  .hint { white-space: pre-wrap; overflow-wrap: anywhere; }
  code { font-family: ui-monospace, monospace; background: #f6f8fa; padding: 1px 4px; border-radius: 4px; }
  .actions { display: flex; gap: 8px; margin-top: 24px; }
  button { font: inherit; padding: 6px 16px; border-radius: 6px; border: 1px solid #d0d7de; background: #f6f8fa; color: #1f2328; cursor: pointer; }
  button.primary { background: #1f883d; border-color: #1f883d; color: #fff; }
  button:disabled { opacity: 0.6; cursor: default; }
  /* Last, so it overrides the light colours above. */
  @media (prefers-color-scheme: dark) {
    body { color: #e6edf3; background: #0d1117; }
    code, .message { background: #161b22; }
    button { color: #e6edf3; background: #21262d; border-color: #30363d; }
    button.primary { background: #238636; border-color: #238636; color: #fff; }
  }
</style>
</head>
<body>
<main>
<section id="starting" class="starting"${hidden(view.state !== 'failed')} role="status" aria-live="polite">
  <div class="spinner" aria-hidden="true"></div>
  <div>
    <h1 id="starting-title">${escapeHtml(starting.title)}</h1>
    <p id="starting-detail" class="detail">${escapeHtml(starting.detail)}</p>
  </div>
</section>
<section id="failed" class="failed"${hidden(view.state === 'failed')} role="alert">
  <h1 id="failed-title">${escapeHtml(failed.title)}</h1>
  <p id="failed-message" class="message">${escapeHtml(failed.message)}</p>
  <div id="failed-hint-section"${hidden(failed.hint !== null)}>
    <h2>How to fix it</h2>
    <p id="failed-hint" class="hint">${escapeHtml(failed.hint ?? '')}</p>
  </div>
  <p class="code">error code: <span id="failed-code">${escapeHtml(failed.code)}</span></p>
  <p class="footer">The configuration file is <code id="failed-config-path">${escapeHtml(failed.config_path)}</code>. Fix the problem, then try again.</p>
  <div class="actions">
    <button id="retry" class="primary" type="button">Try again</button>
    <button id="quit" type="button">Quit</button>
  </div>
</section>
</main>
<script src="startup.js"></script>
</body>
</html>
`;
}

/**
 * The page's script, served as a file so the CSP needs no 'unsafe-inline'. Plain ES2020 for
 * Chromium; it only copies the state's texts into the page (textContent, never HTML).
 */
const PAGE_SCRIPT = `'use strict';
(() => {
  const byId = (id) => document.getElementById(id);
  let shown = '';
  let state = 'starting';
  const show = (view) => {
    const text = JSON.stringify(view);
    if (text === shown) return;
    shown = text;
    state = view.state;
    byId('starting').hidden = view.state === 'failed';
    byId('failed').hidden = view.state !== 'failed';
    if (view.state === 'starting') {
      byId('starting-title').textContent = view.title;
      byId('starting-detail').textContent = view.detail;
      document.title = 'switchboard';
    }
    if (view.state === 'failed') {
      byId('failed-title').textContent = view.title;
      byId('failed-message').textContent = view.message;
      byId('failed-hint-section').hidden = view.hint === null;
      byId('failed-hint').textContent = view.hint || '';
      byId('failed-code').textContent = view.code;
      byId('failed-config-path').textContent = view.config_path;
      byId('retry').disabled = false;
      byId('quit').disabled = false;
      document.title = 'switchboard — ' + view.title;
    }
  };
  const poll = async () => {
    try {
      const response = await fetch('${STATE.slice(1)}', { cache: 'no-store' });
      if (response.ok) show(await response.json());
    } catch {
      // main is busy or the window is switching to the UI: the next poll tells
    }
    setTimeout(poll, state === 'failed' ? 1000 : 150);
  };
  const act = (action) => {
    byId('retry').disabled = true;
    byId('quit').disabled = true;
    shown = ''; // the same failure again must still re-enable the buttons
    fetch('startup/' + action, { method: 'POST', headers: { '${ACTION_HEADER}': action } })
      .catch(() => undefined)
      .then(() => { state = 'starting'; });
  };
  byId('retry').addEventListener('click', () => act('retry'));
  byId('quit').addEventListener('click', () => act('quit'));
  poll();
})();
`;
