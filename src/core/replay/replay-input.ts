import type { ChaosProfile } from '../../shared/delivery-lab.js';
import type { Replay } from '../../shared/events.js';
import type { ReplayRequest } from './replay.js';

/**
 * The one mapping from what a caller sends (UI API `replayEvent` / `prepareReplay`, the MCP
 * `replay_webhook_event` tool; the CLI goes through the API) to a replay request. A field a face
 * does not offer is simply absent, so a new replay option (a chaos profile, say) is added here
 * and in the schemas that take it, and every face maps it the same way.
 */
export interface ReplayInput {
  id: number;
  target_url?: string | undefined;
  resign?: boolean | undefined;
  /** The edited body: text, or base64 with `payload_encoding: "base64"`. */
  payload?: string | undefined;
  payload_encoding?: 'utf8' | 'base64' | undefined;
  headers?: Record<string, string> | undefined;
  /** Dot path → JSON value, set in the JSON body (form fields by name). */
  overrides?: Record<string, unknown> | undefined;
  /** Duplicates and delay (DESIGN §15). */
  chaos?: ChaosProfile | undefined;
}

export function toReplayRequest(
  input: ReplayInput,
  requestedBy: Replay['requested_by'],
  beforeSend?: ReplayRequest['beforeSend'],
): ReplayRequest {
  return {
    eventId: input.id,
    ...(input.target_url !== undefined ? { targetUrl: input.target_url } : {}),
    ...(input.resign !== undefined ? { resign: input.resign } : {}),
    ...(input.payload !== undefined ? { payload: new Uint8Array(Buffer.from(input.payload, input.payload_encoding ?? 'utf8')) } : {}),
    ...(input.headers !== undefined ? { headers: input.headers } : {}),
    ...(input.overrides !== undefined ? { overrides: input.overrides } : {}),
    ...(input.chaos !== undefined ? { chaos: input.chaos } : {}),
    requestedBy,
    ...(beforeSend ? { beforeSend } : {}),
  };
}
