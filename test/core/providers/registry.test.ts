import { describe, expect, it } from 'vitest';
import { SIGNED_KINDS, TOKEN_KINDS, WEBHOOK_KINDS } from '../../../src/shared/providers.js';
import { allVerifiers, verifierFor } from '../../../src/core/providers/registry.js';
import { isSecretHeader, sanitizeHeaders } from '../../../src/core/redact.js';

describe('provider registry', () => {
  it('has a verifier for every webhook kind the config accepts, with the matching trust mode', () => {
    for (const kind of WEBHOOK_KINDS) {
      const verifier = verifierFor(kind);
      expect(verifier, kind).toBeDefined();
      expect(verifier!.kind).toBe(kind);
      const expected = (SIGNED_KINDS as readonly string[]).includes(kind) ? 'signed' : (TOKEN_KINDS as readonly string[]).includes(kind) ? 'token' : 'open';
      expect(verifier!.trustMode, kind).toBe(expected);
    }
  });

  it('redacts every signature header of every kind, and never one a replay keeps', () => {
    for (const verifier of allVerifiers()) {
      for (const name of verifier.secretHeaders) {
        expect(name, `${verifier.kind}: ${name}`).toBe(name.toLowerCase());
        expect(isSecretHeader(name), `${verifier.kind}: ${name}`).toBe(true);
        expect(sanitizeHeaders({ [name]: 'value' })[name]).toBe('«redacted»');
      }
      for (const name of verifier.replayHeaders) {
        expect(name, `${verifier.kind}: ${name}`).toBe(name.toLowerCase());
        expect(isSecretHeader(name), `${verifier.kind} replays ${name}, which is redacted`).toBe(false);
      }
    }
  });

  it('can re-sign a replay for every signed kind but discord (whose private key only Discord has)', () => {
    for (const kind of SIGNED_KINDS) expect(typeof verifierFor(kind)!.sign, kind).toBe(kind === 'discord' ? 'undefined' : 'function');
  });
});
