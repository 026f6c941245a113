import { describe, expect, it } from 'vitest';
import { eventTrust } from '../../src/renderer/src/lib/trust';

describe('eventTrust: the words and colour of an event’s trust', () => {
  it('shows green "signed" only for what this instance verified', () => {
    expect(eventTrust({ trust_mode: 'signed', verified: true, origin: 'provider' }, 'stripe')).toMatchObject({ tone: 'signed', text: 'signed', verdict: 'Verified' });
    expect(eventTrust({ trust_mode: 'signed', verified: true, origin: 'test' }, 'github')).toMatchObject({ tone: 'signed', verdict: 'Verified' });
    expect(eventTrust({ trust_mode: 'token', verified: false, origin: 'provider' })).toMatchObject({ tone: 'token', verdict: 'Not verified' });
  });

  it('shows an import as what its file says, never as verified', () => {
    const label = eventTrust({ trust_mode: 'signed', verified: false, origin: 'import' }, 'stripe');
    expect(label).toMatchObject({ tone: 'unverified', text: 'IMPORTED · file says signed', compactText: 'signed?', verdict: 'Not verified' });
    expect(label.explained).toMatch(/never checked this event's signature/);
  });

  it('shows a Discord test event as signed by switchboard', () => {
    expect(eventTrust({ trust_mode: 'signed', verified: true, origin: 'test' }, 'discord')).toMatchObject({
      tone: 'unverified',
      text: 'TEST · signed by switchboard',
      verdict: "Verified with switchboard's own key",
    });
    // A real Discord delivery is verified against the application's key: the usual badge.
    expect(eventTrust({ trust_mode: 'signed', verified: true, origin: 'provider' }, 'discord')).toMatchObject({ tone: 'signed', text: 'signed' });
  });
});
