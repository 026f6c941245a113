import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ConfigProblem } from '../../shared/api';
import { TOKEN_STORAGE_KEY, type Client } from './api/client';
import { AppDataProvider, useAppData } from './app-data';
import { replaceView, screenFromHash, SCREENS, type Screen } from './lib/nav';
import { NavigationContext, type Intent } from './navigation';
import { ConnectScreen } from './screens/connect-screen';
import { EventsScreen } from './screens/events-screen';
import { ProvidersScreen } from './screens/providers-screen';
import { SettingsScreen } from './screens/settings-screen';
import { ShapesScreen } from './screens/shapes-screen';
import { SuitesScreen } from './screens/suites-screen';

const LABELS: Record<Screen, string> = { events: 'Events', providers: 'Providers', connect: 'Connect', settings: 'Settings', suites: 'Suites', shapes: 'Shapes' };

export function App({ client }: { client: Client }) {
  return (
    <AppDataProvider client={client}>
      <Shell />
    </AppDataProvider>
  );
}

/** A hand edit of config.json that was refused: where, and that the previous configuration runs on. */
function ConfigProblemBanner({ problem }: { problem: ConfigProblem }) {
  const where = [problem.path, problem.line !== null ? `line ${problem.line}, column ${problem.column}` : null].filter(Boolean).join(' · ');
  return (
    <div className="config-problem" role="alert" aria-label="config.json not applied">
      <strong>config.json was not applied</strong> — {problem.message}
      {where && <span className="mono"> ({where})</span>}
      <div className="small">
        <span className="mono">{problem.file}</span> · switchboard keeps running on the previous configuration; save the file again once it is fixed.
      </div>
    </div>
  );
}

/**
 * No token, or one the server no longer accepts (it was rotated): where to get one, and a field
 * to paste it, rather than a "Reconnecting…" that never ends.
 */
function TokenPage() {
  const [token, setToken] = useState('');
  return (
    <main className="page">
      <div className="empty-state token-page">
        <h1>This page needs the control token</h1>
        <p>
          Open the web UI link that <code>switchboard serve</code> printed — it ends in <code>#token=…</code>. This browser keeps it, so links to a view work without
          it afterwards.
        </p>
        <p>
          Or paste the token: it is in <code>&lt;data dir&gt;/control-token</code> — <code>~/.switchboard/control-token</code> unless switchboard was started with{' '}
          <code>--data-dir</code> or <code>SWITCHBOARD_HOME</code> (or <code>SWITCHBOARD_TOKEN</code> was set). A token stored here before is refused when the file was
          replaced: the token was rotated.
        </p>
        <form
          className="token-form"
          onSubmit={(event) => {
            event.preventDefault();
            if (!token.trim()) return;
            window.localStorage.setItem(TOKEN_STORAGE_KEY, token.trim());
            window.location.reload();
          }}
        >
          <label className="field">
            <span>Control token</span>
            <input type="password" autoComplete="off" className="mono" value={token} onChange={(event) => setToken(event.target.value)} />
          </label>
          <button type="submit" className="primary-button" disabled={!token.trim()}>
            Use this token
          </button>
        </form>
      </div>
    </main>
  );
}

function Shell() {
  const [screen, setScreen] = useState<Screen>(() => screenFromHash(window.location.hash));
  const [intent, setIntent] = useState<Intent>(null);
  const { liveStatus, loadError, loadErrorCode, info, configProblem } = useAppData();
  const tokenRefused = loadErrorCode === 'unauthorized' || (loadError !== null && /token/i.test(loadError));

  useEffect(() => {
    const onHash = () => setScreen(screenFromHash(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const navigate = useCallback((next: Screen, nextIntent: Intent = null) => {
    setIntent(nextIntent);
    setScreen(next);
    replaceView(next);
  }, []);
  const navigation = useMemo(() => ({ navigate, intent, clearIntent: () => setIntent(null) }), [navigate, intent]);

  useEffect(() => {
    document.title = `${LABELS[screen]} · switchboard`;
  }, [screen]);

  return (
    <NavigationContext.Provider value={navigation}>
      <div className="app">
        <header className="topbar">
          <div className="brand">
            <span className="brand-mark" aria-hidden="true">
              <span />
              <span />
              <span />
            </span>
            <span className="brand-name">switchboard</span>
          </div>
          <nav aria-label="Screens" className="nav">
            {SCREENS.map((name) => (
              <a
                key={name}
                href={`#/${name}`}
                className="nav-link"
                aria-current={screen === name ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(name);
                }}
              >
                <span className="jack" aria-hidden="true" />
                {LABELS[name]}
              </a>
            ))}
          </nav>
          <span className="spacer" />
          <span className={`live-indicator live-${tokenRefused ? 'closed' : liveStatus}`} role="status" aria-live="polite">
            <span className="lamp" aria-hidden="true" />
            {tokenRefused ? 'Not connected: no valid token' : liveStatus === 'open' ? 'Live' : liveStatus === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
          </span>
          {info && <span className="version muted small">v{info.version}</span>}
        </header>
        {configProblem && !tokenRefused && <ConfigProblemBanner problem={configProblem} />}
        {tokenRefused ? (
          <TokenPage />
        ) : (
          <main className="main" id="main">
            {screen === 'events' && <EventsScreen />}
            {screen === 'providers' && <ProvidersScreen />}
            {screen === 'connect' && <ConnectScreen />}
            {screen === 'settings' && <SettingsScreen />}
            {screen === 'suites' && <SuitesScreen />}
            {screen === 'shapes' && <ShapesScreen />}
          </main>
        )}
      </div>
    </NavigationContext.Provider>
  );
}
