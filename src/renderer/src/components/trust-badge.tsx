import type { EventSummary, TrustMode } from '../../../shared/events';
import { useProviderKind } from '../app-data';
import { eventTrust, providerTrust, type TrustTone } from '../lib/trust';

/** One colour language for trust, always with words (lib/trust.ts says which words). */
function Badge({ tone, text, title, compact }: { tone: TrustTone; text: string; title: string; compact: boolean }) {
  return (
    <span className={`trust-badge trust-${tone}${compact ? ' compact' : ''}`} title={title}>
      <span className="trust-dot" aria-hidden="true" />
      {text}
    </span>
  );
}

/** A provider's trust mode (the Providers screen). */
export function TrustBadge({ mode, compact = false }: { mode: TrustMode; compact?: boolean }) {
  const label = providerTrust(mode);
  return <Badge tone={label.tone} text={label.text} title={label.title} compact={compact} />;
}

/** An event's trust: what this instance verified, or what an import file merely says. */
export function EventTrustBadge({ event, compact = false }: { event: Pick<EventSummary, 'provider' | 'trust_mode' | 'verified' | 'origin'>; compact?: boolean }) {
  const label = eventTrust(event, useProviderKind(event.provider));
  return <Badge tone={label.tone} text={compact ? label.compactText : label.text} title={label.title} compact={compact} />;
}
