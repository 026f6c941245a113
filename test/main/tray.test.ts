import type { Menu, MenuItemConstructorOptions, NativeImage, Tray } from 'electron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTray, trayMenuTemplate, trayStatusLines } from '../../src/main/tray.js';
import type { ProviderStatus } from '../../src/shared/providers.js';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';

const provider = (overrides: Partial<ProviderStatus>): ProviderStatus => ({
  name: 'github',
  kind: 'github',
  family: 'webhook',
  trust_mode: 'signed',
  enabled: true,
  secret_status: 'configured',
  path: '/webhooks/github',
  status: 'listening',
  ...overrides,
});

describe('the tray status', () => {
  it('says where switchboard receives, how the providers are, and what arrived', () => {
    expect(trayStatusLines({ receiverUrl: 'http://127.0.0.1:7777', providers: [provider({})], eventsReceived: 1 })).toEqual([
      'Receiving on http://127.0.0.1:7777',
      '1 of 1 providers enabled',
      '1 event received since start',
    ]);
  });

  it('names the providers that need attention', () => {
    const lines = trayStatusLines({
      receiverUrl: 'http://127.0.0.1:7777',
      providers: [
        provider({}),
        provider({ name: 'stripe', secret_status: 'missing' }),
        provider({ name: 'jobs', family: 'queue', status: 'error', last_error: 'ECONNREFUSED' }),
        provider({ name: 'off', enabled: false, status: 'disabled', secret_status: 'missing' }),
      ],
      eventsReceived: 0,
    });
    expect(lines[1]).toBe('3 of 4 providers enabled, 2 need attention (stripe, jobs)');
  });

  it('tells a new user what to do first', () => {
    expect(trayStatusLines({ receiverUrl: 'http://127.0.0.1:7777', providers: [], eventsReceived: 0 })[1]).toBe('No providers yet: add one in the window');
  });

  it('offers Open and Quit below the status lines', () => {
    const actions = { open: () => undefined, quit: () => undefined };
    const template = trayMenuTemplate(['a', 'b'], actions);
    expect(template.filter((item) => item.label === 'a' || item.label === 'b').every((item) => item.enabled === false)).toBe(true);
    expect(template.find((item) => item.label === 'Open switchboard')?.click).toBe(actions.open);
    expect(template.at(-1)).toMatchObject({ label: 'Quit switchboard', click: actions.quit });
  });
});

describe('setupTray, on a running switchboard', () => {
  let t: TestSwitchboard;
  beforeAll(async () => {
    t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] });
  });
  afterAll(() => t?.close());

  it('shows the live status, keeps it current, and opens/quits from the menu', async () => {
    const state = { tooltip: '', menus: [] as MenuItemConstructorOptions[][], clicks: new Map<string, () => void>(), destroyed: false };
    const tray = {
      setToolTip: (text: string) => (state.tooltip = text),
      setContextMenu: (menu: { template: MenuItemConstructorOptions[] }) => state.menus.push(menu.template),
      on: (name: string, listener: () => void) => state.clicks.set(name, listener),
      destroy: () => (state.destroyed = true),
    };
    let opened = 0;
    let quit = 0;
    const listenersBefore = t.sb.bus.listenerCount('event');
    const handle = setupTray({
      createTray: () => tray as unknown as Tray,
      buildMenu: (template) => ({ template }) as unknown as Menu,
      icon: {} as NativeImage,
      sb: t.sb,
      open: () => opened++,
      quit: () => quit++,
    });
    try {
      expect(state.tooltip).toContain(`Receiving on ${t.sb.url.receiver}`);
      expect(state.tooltip).toContain('0 events received since start');

      await t.deliver('/webhooks/homelab', '{"n":1}', { 'content-type': 'application/json' });
      await t.deliver('/webhooks/homelab', '{"n":2}', { 'content-type': 'application/json' });
      await expect.poll(() => state.tooltip, { timeout: 5000 }).toContain('2 events received since start');
      // Two deliveries, one coalesced refresh.
      expect(state.menus).toHaveLength(2);

      state.clicks.get('click')!();
      const menu = state.menus.at(-1)!;
      (menu.find((item) => item.label === 'Open switchboard')!.click as () => void)();
      (menu.find((item) => item.label === 'Quit switchboard')!.click as () => void)();
      expect(opened).toBe(2);
      expect(quit).toBe(1);
    } finally {
      handle.close();
    }
    expect(state.destroyed).toBe(true);
    expect(t.sb.bus.listenerCount('event')).toBe(listenersBefore);
  });
});
