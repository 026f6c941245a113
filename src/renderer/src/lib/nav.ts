/** The four screens, addressed by the URL fragment (`#/providers`) once the token is gone from it. */
export const SCREENS = ['events', 'providers', 'connect', 'settings'] as const;
export type Screen = (typeof SCREENS)[number];

export function screenFromHash(hash: string): Screen {
  const name = hash.replace(/^#\/?/, '');
  return (SCREENS as readonly string[]).includes(name) ? (name as Screen) : 'events';
}
