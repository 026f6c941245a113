import type { EventSummary, TrustMode } from '../../../shared/events';

/**
 * How an event's trust is shown (DESIGN §9, §12): one colour language, always with words —
 * signed green, token amber, open red, queue blue — and grey for a claim nobody here checked.
 * The green "signed" is for what this instance verified: an imported event shows what its file
 * said ("IMPORTED · file says signed"), never the green badge, and a Discord test event, which
 * switchboard signed with its own key (only Discord holds the application's), says so.
 */

export type TrustTone = TrustMode | 'unverified';

export interface TrustLabel {
  tone: TrustTone;
  /** The badge's words in the detail pane. */
  text: string;
  /** The badge's words in a list row (a narrow column). */
  compactText: string;
  /** The tooltip and the screen reader's words. */
  title: string;
  /** The verification line of the detail pane, after "Verified" / "Not verified". */
  explained: string;
  /** The heading of that line. */
  verdict: string;
}

const MODES: Record<TrustMode, { title: string; explained: string }> = {
  signed: { title: "the provider's signature over the raw body was verified", explained: 'Signature verified over the raw body.' },
  token: { title: 'the sender presented the shared token; the body itself is not verified', explained: 'The sender presented the shared token. The body itself is not signed.' },
  open: { title: 'not authenticated at all (open provider, explicit opt-in)', explained: 'Not authenticated: anyone who can reach this URL can post here.' },
  queue: { title: 'pulled from a broker; trust is the broker connection', explained: 'Pulled from a broker; trust is the broker connection.' },
};

export function eventTrust(event: Pick<EventSummary, 'trust_mode' | 'verified' | 'origin'>, providerKind?: string): TrustLabel {
  const mode = event.trust_mode;
  if (event.origin === 'import') {
    return {
      tone: 'unverified',
      text: `IMPORTED · file says ${mode}`,
      compactText: `${mode}?`,
      title: `imported from a file that says ${mode}: switchboard did not verify it`,
      verdict: 'Not verified',
      explained: `Imported from a file that says ${mode}. switchboard never checked this event's signature, whatever the file claims.`,
    };
  }
  if (event.origin === 'test' && providerKind === 'discord') {
    return {
      tone: 'unverified',
      text: 'TEST · signed by switchboard',
      compactText: 'test key',
      title: "a test event signed with switchboard's own key: it proves switchboard made it, nothing about Discord",
      verdict: "Verified with switchboard's own key",
      explained: 'A test event switchboard signed itself (only Discord holds the application’s private key): it proves nothing about Discord.',
    };
  }
  return {
    tone: mode,
    text: mode,
    compactText: mode,
    title: MODES[mode].title,
    verdict: event.verified ? 'Verified' : 'Not verified',
    explained: MODES[mode].explained,
  };
}

/** A provider's own trust (the Providers screen): what its deliveries will be. */
export function providerTrust(mode: TrustMode): Pick<TrustLabel, 'tone' | 'text' | 'title'> {
  return { tone: mode, text: mode, title: MODES[mode].title };
}
