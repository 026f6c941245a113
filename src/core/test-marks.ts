/**
 * Telling switchboard's own test events apart from real deliveries (DESIGN §11: stored with
 * origin "test", shown as TEST). Defends against an internet sender passing its delivery off as
 * a test event, or a captured test event being replayed as one:
 * - over HTTP, the receiver believes the `x-switchboard-test` header only when it carries a
 *   nonce this process minted, still pending, for exactly this provider and body (HMAC with a
 *   per-process key over nonce, provider and body hash); each mark is good for one delivery
 *   within a minute, and a valid mark is removed before the headers are stored (an invalid one
 *   is stored redacted, see redact.ts);
 * - a queue message cannot carry a header, so a test message is recognised by its exact bytes
 *   (which hold fresh random ids) on the provider it was published for, once.
 * Discord signs with a private key only Discord has, so test events for it are signed with an
 * Ed25519 key pair made here, and only a marked delivery is checked against that key.
 */
import { createHash, createHmac, generateKeyPairSync, randomBytes, sign as signBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { EventSummary } from '../shared/events.js';

export const TEST_MARK_HEADER = 'x-switchboard-test';
export const TEST_MARK_TTL_MS = 60_000;

/** What the ingest path calls once a marked delivery is stored (or found to be a duplicate). */
export interface TestClaim {
  stored(event: EventSummary): void;
  /** The Ed25519 public key (hex) to verify a Discord test event with. */
  discordPublicKey: string;
}

interface Pending {
  provider: string;
  bodyHash: string;
  resolve(event: EventSummary): void;
  timer: NodeJS.Timeout;
}

/** A send in flight: the header to add (HTTP) and the stored event, once the path stored it. */
export interface PendingTest {
  header: string;
  stored: Promise<EventSummary>;
  cancel(): void;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const DER_ED25519_PUBLIC_PREFIX_BYTES = 12;

export class TestMarks {
  private readonly key = randomBytes(32);
  private readonly byNonce = new Map<string, Pending>();
  private readonly byPayload = new Map<string, Pending>();
  private readonly discordKeys: { privateKey: KeyObject; publicKeyHex: string };

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ format: 'der', type: 'spki' });
    this.discordKeys = { privateKey, publicKeyHex: der.subarray(DER_ED25519_PUBLIC_PREFIX_BYTES).toString('hex') };
  }

  /** The public half of the Discord test key (hex, as Discord shows an application's key). */
  get discordPublicKey(): string {
    return this.discordKeys.publicKeyHex;
  }

  /** Discord's scheme, with the test key: Ed25519 over timestamp + body. */
  signDiscord(body: Uint8Array, nowMs: number): Record<string, string> {
    const timestamp = String(Math.floor(nowMs / 1000));
    const signature = signBytes(null, Buffer.concat([Buffer.from(timestamp), body]), this.discordKeys.privateKey).toString('hex');
    return { 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp };
  }

  /** Registers an HTTP test delivery about to be sent; the returned header marks it. */
  expectDelivery(provider: string, body: Uint8Array): PendingTest {
    const nonce = randomBytes(16).toString('hex');
    const bodyHash = sha256(body);
    return this.register(this.byNonce, nonce, provider, bodyHash, `${nonce}.${this.mac(nonce, provider, bodyHash)}`);
  }

  /** Registers a queue test message about to be published. */
  expectMessage(provider: string, payload: Uint8Array): PendingTest {
    const bodyHash = sha256(payload);
    return this.register(this.byPayload, `${provider}\u0000${bodyHash}`, provider, bodyHash, '');
  }

  /** The claim for a marked HTTP delivery, or null when the mark is not one of ours (or is spent). */
  claimDelivery(provider: string, header: string | undefined, body: Uint8Array): TestClaim | null {
    if (header === undefined || this.byNonce.size === 0) return null;
    const [nonce, mac] = header.trim().split('.');
    if (!nonce || !mac) return null;
    const pending = this.byNonce.get(nonce);
    if (!pending || pending.provider !== provider) return null;
    const bodyHash = sha256(body);
    const expected = Buffer.from(this.mac(nonce, provider, bodyHash));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given) || bodyHash !== pending.bodyHash) return null;
    return this.claim(this.byNonce, nonce, pending);
  }

  /** The claim for a queue message that is a pending test message of this provider, else null. */
  claimMessage(provider: string, payload: Uint8Array): TestClaim | null {
    if (this.byPayload.size === 0) return null;
    const key = `${provider}\u0000${sha256(payload)}`;
    const pending = this.byPayload.get(key);
    return pending ? this.claim(this.byPayload, key, pending) : null;
  }

  private claim(map: Map<string, Pending>, key: string, pending: Pending): TestClaim {
    map.delete(key);
    clearTimeout(pending.timer);
    return { stored: pending.resolve, discordPublicKey: this.discordKeys.publicKeyHex };
  }

  private register(map: Map<string, Pending>, key: string, provider: string, bodyHash: string, header: string): PendingTest {
    let resolve!: (event: EventSummary) => void;
    const stored = new Promise<EventSummary>((done) => (resolve = done));
    const timer = setTimeout(() => map.delete(key), TEST_MARK_TTL_MS);
    timer.unref();
    map.set(key, { provider, bodyHash, resolve, timer });
    return {
      header,
      stored,
      cancel: () => {
        clearTimeout(timer);
        map.delete(key);
      },
    };
  }

  private mac(nonce: string, provider: string, bodyHash: string): string {
    return createHmac('sha256', this.key).update(`${nonce}\u0000${provider}\u0000${bodyHash}`).digest('hex');
  }
}
