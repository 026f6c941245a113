import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Client } from './api/client';
import { AppDataProvider, useAppData } from './app-data';
import { replaceView, screenFromHash, SCREENS, type Screen } from './lib/nav';
import { NavigationContext, type Intent } from './navigation';
import { ConnectScreen } from './screens/connect-screen';
import { EventsScreen } from './screens/events-screen';
import { ProvidersScreen } from './screens/providers-screen';
import { SettingsScreen } from './screens/settings-screen';

const LABELS: Record<Screen, string> = { events: 'Events', providers: 'Providers', connect: 'Connect', settings: 'Settings' };

export function App({ client }: { client: Client }) {
  return (
    <AppDataProvider client={client}>
      <Shell />
    </AppDataProvider>
  );
}

function Shell() {
  const [screen, setScreen] = useState<Screen>(() => screenFromHash(window.location.hash));
  const [intent, setIntent] = useState<Intent>(null);
  const { liveStatus, loadError, info } = useAppData();

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
          <span className={`live-indicator live-${liveStatus}`} role="status" aria-live="polite">
            <span className="lamp" aria-hidden="true" />
            {liveStatus === 'open' ? 'Live' : liveStatus === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
          </span>
          {info && <span className="version muted small">v{info.version}</span>}
        </header>
        {loadError && /token/i.test(loadError) ? (
          <main className="page">
            <div className="empty-state">
              <h1>This page needs the control token</h1>
              <p>Open the web UI link that <code>switchboard serve</code> printed — it ends in <code>#token=…</code>. This browser keeps it, so links to a view work without it afterwards.</p>
            </div>
          </main>
        ) : (
          <main className="main" id="main">
            {screen === 'events' && <EventsScreen />}
            {screen === 'providers' && <ProvidersScreen />}
            {screen === 'connect' && <ConnectScreen />}
            {screen === 'settings' && <SettingsScreen />}
          </main>
        )}
      </div>
    </NavigationContext.Provider>
  );
}
