import type { TrustMode } from '../../../shared/events';

/** One colour language for trust, always with words: signed green, token amber, open red, queue blue. */
const LABELS: Record<TrustMode, { text: string; title: string }> = {
  signed: { text: 'signed', title: "the provider's signature over the raw body was verified" },
  token: { text: 'token', title: 'the sender presented the shared token; the body itself is not verified' },
  open: { text: 'open', title: 'not authenticated at all (open provider, explicit opt-in)' },
  queue: { text: 'queue', title: 'pulled from a broker; trust is the broker connection' },
};

export function TrustBadge({ mode, compact = false }: { mode: TrustMode; compact?: boolean }) {
  const label = LABELS[mode];
  return (
    <span className={`trust-badge trust-${mode}${compact ? ' compact' : ''}`} title={label.title}>
      <span className="trust-dot" aria-hidden="true" />
      {label.text}
    </span>
  );
}
