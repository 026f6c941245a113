import type { SecretSource } from '../config.js';
import { SwitchboardError } from '../errors.js';
import type { Services } from '../services.js';
import { redactSecrets, redisUrlProblem, secretsOfUrl, withOneShotRedis } from './redis-link.js';

/**
 * Replays a stored event onto a Redis stream (`XADD`), the queue-family counterpart of an
 * HTTP replay. The entry carries the stored payload in `payload` and the event type in the
 * target provider's `type_field` (default `type`), so a `redis-stream` provider reading that
 * stream stores it again with the same type and payload.
 *
 * Defends against: the connection URL leaking (errors are redacted, the URL is never
 * returned), and callers pointing switchboard at arbitrary hosts. Prefer `provider` (a
 * configured queue provider's connection) for anything remote-controlled: MCP should expose
 * only that form; `url` is for the local UI.
 */

export type RepublishTarget = { stream: string } & ({ provider: string; url?: never } | { url: SecretSource; provider?: never });

export interface RepublishResult {
  event_id: number;
  stream: string;
  /** The id Redis gave the new entry. */
  entry_id: string;
}

/** The field of the new entry that says which event it replays. */
export const REPLAY_OF_FIELD = 'switchboard_replay_of';

export async function republishToStream(
  sb: Pick<Services, 'store' | 'providers'>,
  eventId: number,
  target: RepublishTarget,
): Promise<RepublishResult> {
  if (typeof target.stream !== 'string' || target.stream === '') {
    throw new SwitchboardError('invalid_argument', 'a stream name is required');
  }
  let source: SecretSource;
  let typeField = 'type';
  if (target.provider !== undefined) {
    const provider = sb.providers.config(target.provider);
    if (!provider) throw new SwitchboardError('not_found', `no provider named "${target.provider}"`);
    if (provider.kind !== 'redis-stream' && provider.kind !== 'redis-pubsub') {
      throw new SwitchboardError('invalid_argument', `provider "${target.provider}" is not a Redis provider`, {
        hint: 'choose a redis-stream or redis-pubsub provider; its connection is used for the XADD',
      });
    }
    source = provider.url;
    typeField = provider.type_field;
  } else {
    source = target.url;
  }
  const url = sb.providers.resolveSecret(source);
  if (url === undefined) throw new SwitchboardError('invalid_argument', 'the Redis URL of the target is not set');
  const problem = redisUrlProblem(url);
  if (problem) throw new SwitchboardError('invalid_argument', problem);

  const event = await sb.store.getEvent(eventId);
  if (!event) throw new SwitchboardError('not_found', `no event with id ${eventId}`);

  const fields: (string | Buffer)[] = [];
  if (event.event_type !== null) fields.push(typeField, event.event_type);
  fields.push('payload', Buffer.from(event.payload), REPLAY_OF_FIELD, String(event.id));

  try {
    const entryId = await withOneShotRedis(url, 'switchboard:republish', (redis) => redis.xadd(target.stream, '*', ...fields));
    if (entryId === null) throw new Error('XADD returned no id');
    return { event_id: event.id, stream: target.stream, entry_id: entryId };
  } catch (error) {
    const message = redactSecrets((error as Error).message, [...secretsOfUrl(url), ...sb.providers.allSecrets()]);
    throw new SwitchboardError('replay_failed', `could not add event ${eventId} to stream ${target.stream}: ${message}`);
  }
}
