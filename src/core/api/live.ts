import type { ConfigProblem, LiveMessage } from '../../shared/api.js';
import type { EventSummary, Rejection } from '../../shared/events.js';
import type { ProviderStatus } from '../../shared/providers.js';
import type { ReplayRecord } from '../store/types.js';
import type { Services } from '../services.js';
import { toWireReplay } from '../wire.js';

/**
 * The UI's live stream, from the bus: what the SSE transport writes and what the Electron
 * shell pushes on LIVE_CHANNEL. Returns the unsubscribe function.
 */
export function subscribeLive(sb: Services, send: (message: LiveMessage) => void): () => void {
  const onEvent = (event: EventSummary) => send({ type: 'event', event });
  const onRejection = (rejection: Rejection) => send({ type: 'rejection', rejection });
  const onReplay = (replay: ReplayRecord) => send({ type: 'replay', replay: toWireReplay(replay) });
  const onProviderStatus = (provider: ProviderStatus) => send({ type: 'provider-status', provider });
  const onConfigChanged = () => send({ type: 'config-changed' });
  const onConfigProblem = (problem: ConfigProblem | null) => send({ type: 'config-problem', problem });
  sb.bus.on('event', onEvent);
  sb.bus.on('rejection', onRejection);
  sb.bus.on('replay', onReplay);
  sb.bus.on('provider-status', onProviderStatus);
  sb.bus.on('config-changed', onConfigChanged);
  sb.bus.on('config-problem', onConfigProblem);
  return () => {
    sb.bus.off('event', onEvent);
    sb.bus.off('rejection', onRejection);
    sb.bus.off('replay', onReplay);
    sb.bus.off('provider-status', onProviderStatus);
    sb.bus.off('config-changed', onConfigChanged);
    sb.bus.off('config-problem', onConfigProblem);
  };
}
