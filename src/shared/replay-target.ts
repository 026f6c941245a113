/**
 * Where a replay goes when the caller names no target (DESIGN §7): the provider's own forward
 * target (its first forward rule), else the last target this event was replayed to, else
 * `replay.default_target`. One global default sent every provider's events to one handler —
 * `r` on a Stripe event hit the GitHub handler — so the provider's own rule comes first.
 *
 * Pure and shared: the replay engine (UI API, MCP, CLI) decides with it, and the renderer shows
 * with it where `r` or Send will go before anything is sent.
 */

export type ReplayTargetSource = 'given' | 'forward' | 'last' | 'default';

export interface ReplayTargetChoice {
  url: string;
  source: ReplayTargetSource;
}

export interface ReplayTargetOptions {
  /** The caller's own target (target_url, --to, the panel's field). */
  given?: string | null;
  /** The provider's forward targets, in config order. */
  forwardTargets: readonly string[];
  /** The target of the event's latest replay, if it was ever replayed. */
  lastTarget?: string | null;
  /** `replay.default_target`. */
  defaultTarget?: string | null;
}

const present = (value: string | null | undefined): value is string => typeof value === 'string' && value.trim() !== '';

/** The target to use, or null when there is none at all. */
export function chooseReplayTarget(options: ReplayTargetOptions): ReplayTargetChoice | null {
  if (present(options.given)) return { url: options.given.trim(), source: 'given' };
  const forward = options.forwardTargets.find(present);
  if (forward !== undefined) return { url: forward, source: 'forward' };
  if (present(options.lastTarget)) return { url: options.lastTarget, source: 'last' };
  if (present(options.defaultTarget)) return { url: options.defaultTarget, source: 'default' };
  return null;
}

/** Why this target, in the words the UI and CLI show. */
export const REPLAY_TARGET_SOURCES: Record<ReplayTargetSource, string> = {
  given: 'the target you gave',
  forward: "the provider's forward target",
  last: 'the last target this event was replayed to',
  default: 'replay.default_target',
};
