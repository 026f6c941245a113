/**
 * The address of a view lives in the URL fragment, `#/<screen>?<params>` (e.g.
 * `#/events?provider=github&type=pull_request&event=42`), so a view is shareable and survives a
 * reload. The fragment never reaches a server. The first load may carry the control token as
 * `#token=…` (what `switchboard serve` prints) or as one more param; the client takes it out.
 */
export const SCREENS = ['events', 'providers', 'connect', 'settings', 'suites', 'shapes'] as const;
export type Screen = (typeof SCREENS)[number];

/** A fragment as a path (`/events`, or '' for the bare `#token=…` form) and its params. */
export function splitFragment(hash: string): { path: string; params: URLSearchParams } {
  const fragment = hash.replace(/^#/, '');
  if (!fragment.startsWith('/')) return { path: '', params: new URLSearchParams(fragment) };
  const query = fragment.indexOf('?');
  return query < 0 ? { path: fragment, params: new URLSearchParams() } : { path: fragment.slice(0, query), params: new URLSearchParams(fragment.slice(query + 1)) };
}

export function joinFragment(path: string, params: URLSearchParams): string {
  const query = params.toString();
  if (path === '') return query ? `#${query}` : '';
  return `#${path}${query ? `?${query}` : ''}`;
}

export function screenFromHash(hash: string): Screen {
  const name = splitFragment(hash).path.replace(/^\//, '');
  return (SCREENS as readonly string[]).includes(name) ? (name as Screen) : 'events';
}

/** The params of the current view's address. */
export function paramsFromHash(hash: string): URLSearchParams {
  return splitFragment(hash).params;
}

/** Writes the address of a view without a history entry per keystroke or click. */
export function replaceView(screen: Screen, params: URLSearchParams = new URLSearchParams()): void {
  const next = joinFragment(`/${screen}`, params);
  if (window.location.hash !== next) window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}${next}`);
}
