import type { Menu, MenuItemConstructorOptions, NativeImage, Tray } from 'electron';
import type { ProviderStatus } from '../shared/providers.js';
import type { Services } from '../core/services.js';

/**
 * The tray icon is what keeps switchboard visible once the window is closed: the core goes on
 * receiving, and the menu says so, reopens the window, and quits for real.
 */

export interface TrayState {
  receiverUrl: string;
  providers: readonly ProviderStatus[];
  eventsReceived: number;
}

export function trayStatusLines({ receiverUrl, providers, eventsReceived }: TrayState): string[] {
  const enabled = providers.filter((provider) => provider.enabled);
  const failing = enabled.filter((provider) => provider.status === 'error' || provider.secret_status === 'missing');
  const providerLine =
    providers.length === 0
      ? 'No providers yet: add one in the window'
      : `${enabled.length} of ${providers.length} providers enabled${failing.length > 0 ? `, ${failing.length} need attention (${failing.map((p) => p.name).join(', ')})` : ''}`;
  return [
    `Receiving on ${receiverUrl}`,
    providerLine,
    `${eventsReceived} ${eventsReceived === 1 ? 'event' : 'events'} received since start`,
  ];
}

export function trayMenuTemplate(lines: readonly string[], actions: { open: () => void; quit: () => void }): MenuItemConstructorOptions[] {
  return [
    ...lines.map((label): MenuItemConstructorOptions => ({ label, enabled: false })),
    { type: 'separator' },
    { label: 'Open switchboard', click: actions.open },
    { type: 'separator' },
    { label: 'Quit switchboard', click: actions.quit },
  ];
}

const REFRESH_MS = 1000;

export interface TrayDeps {
  createTray: (icon: NativeImage) => Tray;
  buildMenu: (template: MenuItemConstructorOptions[]) => Menu;
  icon: NativeImage;
  sb: Pick<Services, 'bus' | 'providers' | 'url'>;
  open: () => void;
  quit: () => void;
}

export function setupTray({ createTray, buildMenu, icon, sb, open, quit }: TrayDeps): { close(): void } {
  const tray = createTray(icon);
  let eventsReceived = 0;
  let timer: NodeJS.Timeout | undefined;
  const render = () => {
    timer = undefined;
    const lines = trayStatusLines({ receiverUrl: sb.url.receiver, providers: sb.providers.statuses(), eventsReceived });
    tray.setToolTip(`switchboard\n${lines.join('\n')}`);
    tray.setContextMenu(buildMenu(trayMenuTemplate(lines, { open, quit })));
  };
  // A burst of deliveries would rebuild the native menu thousands of times; once a second is plenty.
  const refresh = () => {
    timer ??= setTimeout(render, REFRESH_MS);
  };
  const onEvent = () => {
    eventsReceived += 1;
    refresh();
  };
  sb.bus.on('event', onEvent);
  sb.bus.on('provider-status', refresh);
  sb.bus.on('config-changed', refresh);
  // Windows and Linux: a click opens the window (macOS shows the menu on click).
  tray.on('click', open);
  render();
  return {
    close() {
      clearTimeout(timer);
      sb.bus.off('event', onEvent);
      sb.bus.off('provider-status', refresh);
      sb.bus.off('config-changed', refresh);
      tray.destroy();
    },
  };
}
