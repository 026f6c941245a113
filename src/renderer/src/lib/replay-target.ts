import type { ProviderView, Settings } from '../../../shared/api';
import type { Replay } from '../../../shared/events';
import { chooseReplayTarget, type ReplayTargetChoice } from '../../../shared/replay-target';

/**
 * Where a replay of this event goes when nobody types a target: the same choice the core makes
 * (src/shared/replay-target.ts), from what the UI already holds — the provider's forward
 * targets, the event's history (newest first) and the settings. The Replay tab pre-fills it
 * and says why; Copy as cURL uses it too.
 */
export function defaultReplayTarget(
  provider: string,
  providers: readonly ProviderView[] | null,
  replays: readonly Replay[],
  settings: Settings | null,
): ReplayTargetChoice | null {
  const view = providers?.find((candidate) => candidate.status.name === provider);
  return chooseReplayTarget({
    forwardTargets: view?.forward_targets ?? [],
    lastTarget: replays[0]?.target_url ?? null,
    defaultTarget: settings?.replay.default_target ?? null,
  });
}
