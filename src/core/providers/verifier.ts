import type { WebhookKind } from '../config.js';
import type { TrustMode } from '../../shared/events.js';

/**
 * One webhook provider kind = one file implementing `Verifier`: how its deliveries are
 * authenticated, what they are called (type, delivery id), which of their headers carry
 * secrets, and how to sign a replay so the consumer's own check passes.
 */

export interface Delivery {
  /** Exactly the bytes received; signatures are always checked over these, never re-serialized. */
  rawBody: Buffer;
  /** Lowercased names; repeated headers joined with ", ". */
  headers: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The URL the sender used (public_url + path + query), for schemes that sign it (Twilio). */
  publicUrl: string | null;
  nowMs: number;
}

export interface VerifyContext {
  secrets: readonly string[];
  toleranceS: number;
  publicKey?: string;
}

export type Verification =
  | { ok: true; detail: string }
  | { ok: false; reason: RejectionReason; hint: string };

export type RejectionReason =
  | 'signature_missing'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'timestamp_missing'
  | 'timestamp_out_of_tolerance'
  | 'token_missing'
  | 'token_mismatch'
  | 'secret_not_configured'
  | 'public_url_not_configured'
  | 'body_too_large'
  /** The verifier itself failed on this body (our bug): refused, never accepted unchecked. */
  | 'verification_failed';

/**
 * verify_detail's note for a scheme that signs neither a delivery id nor a time: its signature
 * proves who produced the bytes, not that this is the first time they arrive. The store dedupes
 * on the delivery id, a header the signature does not cover, so anyone holding one captured
 * delivery (a proxy log, a shared HAR, a leaked request) can re-send it under a new id as a new
 * verified event, at any time. Said on the event because "verified" alone suggests otherwise.
 */
export function noReplayProtection(sender: string, idHeader: string): string {
  return `no replay protection in this scheme: ${sender} signs neither a delivery id nor a time, so a captured delivery re-sent with a new ${idHeader} is a new verified event`;
}

export interface Description {
  eventType: string | null;
  externalId: string | null;
}

export interface HandshakeAnswer {
  /** 200 unless the protocol wants another (Discord webhook events expect 204). */
  status?: number;
  contentType: string;
  body: string;
}

export interface SignInput {
  body: Buffer;
  secret: string;
  nowMs: number;
  /**
   * The headers the replay will carry (content-type, the kind's `replayHeaders`, caller
   * overrides; signature headers already removed), for schemes that sign an id from them.
   */
  headers: Readonly<Record<string, string>>;
  /**
   * For schemes that sign the URL (Twilio): the URL the replay is POSTed to, since the consumer
   * checks the signature against the URL it was reached at, not the original public one.
   */
  publicUrl: string | null;
}

export interface Verifier {
  readonly kind: WebhookKind;
  readonly trustMode: Exclude<TrustMode, 'queue'>;
  /** Lowercased headers that carry a signature or token: redacted when stored, dropped on replay. */
  readonly secretHeaders: readonly string[];
  /** Lowercased headers a consumer routes on (event type, delivery id): kept on replay. */
  readonly replayHeaders: readonly string[];
  /** Default clock tolerance for timestamped schemes. */
  readonly defaultToleranceS?: number;
  verify(delivery: Delivery, context: VerifyContext): Verification;
  describe(delivery: Delivery): Description;
  /** A protocol handshake answered instead of the usual `{id, duplicate}` (still stored). */
  handshake?(delivery: Delivery): HandshakeAnswer | null;
  /** Fresh signature headers for a replay; absent for kinds that are not signed (or, like Discord, cannot be re-signed). */
  sign?(input: SignInput): Record<string, string>;
  /**
   * For schemes that sign a timestamp inside the body (Linear's `webhookTimestamp`): the body
   * with that timestamp set to now and every other byte unchanged, so the consumer's freshness
   * check passes. When re-signing, call it before `sign()` and send (and sign) what it returns.
   */
  refreshBody?(body: Buffer, nowMs: number): Buffer;
}
