import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { ApiOutput, ConfigProblem, LiveMessage, ProviderView, ServerInfo, Settings } from '../../shared/api';
import type { Client, LiveStatus } from './api/client';

/**
 * What every screen shares: the client, the providers, settings and server info (refetched when
 * the config changes), and one live subscription fanned out to the screens that listen.
 */
export interface AppData {
  client: Client;
  liveStatus: LiveStatus;
  providers: ProviderView[] | null;
  secretStorage: ApiOutput<'listProviders'>['secret_storage'];
  settings: Settings | null;
  info: ServerInfo | null;
  loadError: string | null;
  /** The error code of loadError (`unauthorized` when the control token is missing or stale). */
  loadErrorCode: string | null;
  /** A hand edit of config.json that was refused; null while the file is valid. */
  configProblem: ConfigProblem | null;
  refresh(): Promise<void>;
  /** Listens to live messages; also told (with null) when the stream reconnects, to refetch. */
  listen(listener: (message: LiveMessage | null) => void): () => void;
}

/** How long after a forward result the providers are fetched again (a burst of forwards is one fetch). */
const FORWARD_REFRESH_MS = 500;

const AppDataContext = createContext<AppData | null>(null);

export function useAppData(): AppData {
  const data = useContext(AppDataContext);
  if (!data) throw new Error('useAppData outside <AppDataProvider>');
  return data;
}

/** A provider's kind; undefined for one not configured (or a component shown on its own). */
export function useProviderKind(name: string): string | undefined {
  return useContext(AppDataContext)?.providers?.find((view) => view.status.name === name)?.status.kind;
}

export function AppDataProvider({ client, children }: { client: Client; children: ReactNode }) {
  const [liveStatus, setLiveStatus] = useState<LiveStatus>('connecting');
  const [providers, setProviders] = useState<ProviderView[] | null>(null);
  const [secretStorage, setSecretStorage] = useState<AppData['secretStorage']>('config-file');
  const [settings, setSettings] = useState<Settings | null>(null);
  const [info, setInfo] = useState<ServerInfo | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loadErrorCode, setLoadErrorCode] = useState<string | null>(null);
  const [configProblem, setConfigProblem] = useState<ConfigProblem | null>(null);
  const listeners = useRef(new Set<(message: LiveMessage | null) => void>());

  const refresh = useCallback(async () => {
    try {
      const [list, nextSettings, nextInfo] = await Promise.all([client.listProviders({}), client.getSettings({}), client.getServerInfo({})]);
      setProviders(list.providers);
      setSecretStorage(list.secret_storage);
      setSettings(nextSettings);
      setInfo(nextInfo);
      setConfigProblem(nextInfo.config_problem);
      setLoadError(null);
      setLoadErrorCode(null);
    } catch (error) {
      setLoadError((error as Error).message);
      setLoadErrorCode((error as { code?: string }).code ?? null);
    }
  }, [client]);

  useEffect(() => {
    void refresh();
    let wasOpen = false;
    let forwardRefresh: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = client.onLive(
      (message) => {
        if (message.type === 'config-changed') void refresh();
        if (message.type === 'config-problem') setConfigProblem(message.problem);
        // A forward rule's result may flag (or clear) its provider's row: look again, once per burst.
        if (message.type === 'replay' && message.replay.requested_by === 'forward' && !forwardRefresh) {
          forwardRefresh = setTimeout(() => {
            forwardRefresh = undefined;
            void refresh();
          }, FORWARD_REFRESH_MS);
        }
        if (message.type === 'provider-status') {
          setProviders((current) => current?.map((view) => (view.status.name === message.provider.name ? { ...view, status: message.provider } : view)) ?? current);
        }
        for (const listener of listeners.current) listener(message);
      },
      (status) => {
        setLiveStatus(status);
        if (status === 'open') {
          // After a reconnect, whatever arrived meanwhile is only in the database.
          if (wasOpen) {
            void refresh();
            for (const listener of listeners.current) listener(null);
          }
          wasOpen = true;
        }
      },
    );
    return () => {
      clearTimeout(forwardRefresh);
      unsubscribe();
    };
  }, [client, refresh]);

  const listen = useCallback((listener: (message: LiveMessage | null) => void) => {
    listeners.current.add(listener);
    return () => {
      listeners.current.delete(listener);
    };
  }, []);

  const value = useMemo<AppData>(
    () => ({ client, liveStatus, providers, secretStorage, settings, info, loadError, loadErrorCode, configProblem, refresh, listen }),
    [client, liveStatus, providers, secretStorage, settings, info, loadError, loadErrorCode, configProblem, refresh, listen],
  );
  return <AppDataContext.Provider value={value}>{children}</AppDataContext.Provider>;
}
