import type { EventBus } from '../bus.js';
import type { Config } from '../config.js';
import { isSwitchboardError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EventSummary } from '../../shared/events.js';
import { seededRandom, type ChaosProfile } from '../../shared/delivery-lab.js';
import { forwardRules, forwardTargets } from './forward-targets.js';
import { REPLAY_MARKER_HEADER, type ReplayEngine } from './replay.js';
import { checkTargetHost, TargetRefusedError } from './target-guard.js';

/**
 * Forward rules (`forward_to` per provider, read through forward-targets.ts): every accepted event is replayed to each URL, like
 * `stripe listen --forward-to` for every provider at once. Ordering constraints:
 * - The bus announces an event right after it is committed, before the receiver writes its
 *   answer; the work is only queued here and starts on a later turn, so forwarding never delays
 *   or fails the provider's delivery.
 * - One queue per target, drained one event at a time (the consumer sees them in arrival order),
 *   holding at most FORWARD_QUEUE_LIMIT waiting events: a target that is down or hangs costs a
 *   bounded amount of memory, and what is dropped is recorded as a failed `forward` replay.
 * - An event that itself arrived as a switchboard replay (`x-switchboard-replay`) is not
 *   forwarded again, so a rule pointing back at a switchboard receiver cannot loop.
 */

export const FORWARD_QUEUE_LIMIT = 100;

/** How long a reordering rule waits for its window to fill before shuffling what it has. */
export const REORDER_GATHER_MS = 250;

interface Queued {
  eventId: number;
  chaos?: ChaosProfile;
}

interface TargetQueue {
  eventIds: Queued[];
  running: boolean;
  failing: boolean;
  /** The chaos profile's generator for this target (seeded once: the same seed, the same decisions). */
  random?: () => number;
}

export interface ForwarderDeps {
  engine: ReplayEngine;
  bus: EventBus;
  config: () => Config;
  logger: Logger;
  queueLimit?: number;
}

export class Forwarder {
  private readonly queues = new Map<string, TargetQueue>();
  /** Why each target's last forward got no answer (absent once one is delivered): the Providers screen flags it. */
  private readonly failures = new Map<string, string>();
  private readonly limit: number;
  private closed = false;

  constructor(private readonly deps: ForwarderDeps) {
    this.limit = deps.queueLimit ?? FORWARD_QUEUE_LIMIT;
    deps.bus.on('event', this.onEvent);
    deps.bus.on('config-changed', this.warnAboutTargets);
    this.warnAboutTargets();
  }

  close(): void {
    this.closed = true;
    this.deps.bus.off('event', this.onEvent);
    this.deps.bus.off('config-changed', this.warnAboutTargets);
    const dropped = [...this.queues.values()].reduce((sum, queue) => sum + queue.eventIds.length, 0);
    if (dropped > 0) this.deps.logger.warn(`forward rules: ${dropped} queued forwards not sent (stopping)`);
    for (const queue of this.queues.values()) queue.eventIds.length = 0;
  }

  /** Why the last forward to `target` got no answer, or null (delivered, whatever the status, or never tried). */
  failure(target: string): string | null {
    return this.failures.get(target) ?? null;
  }

  /** Events waiting (not in flight) for one target. */
  waiting(target: string): number {
    return this.queues.get(target)?.eventIds.length ?? 0;
  }

  private readonly onEvent = (event: EventSummary): void => {
    if (this.closed) return;
    const provider = this.deps.config().providers.find((candidate) => candidate.name === event.provider);
    for (const rule of forwardRules(provider)) this.enqueue(rule.to, event.id, rule.chaos);
  };

  private enqueue(target: string, eventId: number, chaos?: ChaosProfile): void {
    let queue = this.queues.get(target);
    if (!queue) {
      queue = { eventIds: [], running: false, failing: false };
      this.queues.set(target, queue);
    }
    if (queue.eventIds.length >= this.limit) {
      void this.recordFailure(
        eventId,
        target,
        `not forwarded: ${queue.eventIds.length} events are already waiting for this target (it is slow or down)`,
      );
      return;
    }
    queue.eventIds.push(chaos ? { eventId, chaos } : { eventId });
    if (!queue.running) {
      queue.running = true;
      const started = queue;
      setImmediate(() => void this.drain(target, started));
    }
  }

  private async drain(target: string, queue: TargetQueue): Promise<void> {
    try {
      while (!this.closed && queue.eventIds.length > 0) {
        const chaos = queue.eventIds[0]!.chaos;
        const window = chaos?.reorder_window;
        if (!window) {
          await this.forwardOne(target, queue, queue.eventIds.shift()!);
          continue;
        }
        // Reordering (DESIGN §15): a window of events, shuffled; an event sent out of its place is marked `reordered`.
        if (queue.eventIds.length < window) await new Promise((resolve) => setTimeout(resolve, REORDER_GATHER_MS));
        queue.random ??= seededRandom(chaos.seed ?? Math.floor(Math.random() * 2 ** 32));
        const batch = queue.eventIds.splice(0, window);
        const order = shuffle(batch, queue.random);
        for (const [index, item] of order.entries()) await this.forwardOne(target, queue, item, order[index] !== batch[index] ? 'reordered' : null);
      }
    } finally {
      queue.running = false;
    }
  }

  private async forwardOne(target: string, queue: TargetQueue, item: Queued, mark: 'reordered' | null = null): Promise<void> {
    const { engine, logger } = this.deps;
    const { eventId, chaos } = item;
    try {
      const request = { eventId, targetUrl: target, requestedBy: 'forward' as const };
      const prepared = await engine.prepare(request);
      if (prepared.event.headers[REPLAY_MARKER_HEADER] !== undefined) return;
      const result = chaos ? await this.withChaos(request, prepared, chaos, mark, queue) : await engine.deliver(prepared);
      const failure = result instanceof TargetRefusedError ? `refused: ${result.message}` : result.delivered ? null : result.error;
      if (result instanceof TargetRefusedError) await this.recordFailure(eventId, target, failure!);
      if (failure !== null && !queue.failing) logger.warn(`forwarding to ${target} failed: ${failure}`);
      if (failure === null && queue.failing) logger.info(`forwarding to ${target} works again`);
      queue.failing = failure !== null;
      if (failure === null) this.failures.delete(target);
      else this.failures.set(target, failure);
    } catch (error) {
      if (this.closed) return;
      if (isSwitchboardError(error) && error.code === 'not_found') return; // cleared meanwhile
      if (isSwitchboardError(error) && error.code === 'invalid_argument') {
        await this.recordFailure(eventId, target, error.message);
        return;
      }
      logger.error(`forwarding event ${eventId} to ${target}: ${(error as Error).message}`);
    }
  }

  /** A chaos rule's send: a refusal is the result, like a plain forward's. */
  private async withChaos(
    request: Parameters<ReplayEngine['prepare']>[0],
    prepared: Awaited<ReturnType<ReplayEngine['prepare']>>,
    chaos: ChaosProfile,
    mark: 'reordered' | null,
    queue: TargetQueue,
  ): Promise<Awaited<ReturnType<ReplayEngine['deliver']>>> {
    queue.random ??= seededRandom(chaos.seed ?? Math.floor(Math.random() * 2 ** 32));
    try {
      return await this.deps.engine.replayWithChaos(request, prepared, chaos, mark, queue.random);
    } catch (error) {
      if (isSwitchboardError(error) && error.code === 'invalid_argument' && /refused/.test(error.message)) return new TargetRefusedError(error.message, error.hint ?? '');
      throw error;
    }
  }

  private async recordFailure(eventId: number, target: string, message: string): Promise<void> {
    try {
      await this.deps.engine.recordFailure(eventId, target, message, 'forward');
    } catch (error) {
      this.deps.logger.error(`recording a failed forward of event ${eventId}: ${(error as Error).message}`);
    }
  }

  /** Says at start (and on every config change) which forward rules can never be delivered. */
  private readonly warnAboutTargets = (): void => {
    const config = this.deps.config();
    for (const provider of config.providers) {
      for (const target of forwardTargets(provider)) {
        try {
          checkTargetHost(new URL(target).hostname, config.replay.allow_hosts);
        } catch (error) {
          if (error instanceof TargetRefusedError) {
            this.deps.logger.warn(`provider "${provider.name}": forward_to ${target} will be refused: ${error.message} (${error.hint})`);
          }
        }
      }
    }
  };
}

/** A seeded Fisher–Yates shuffle (a new array). */
function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let index = out.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [out[index], out[other]] = [out[other]!, out[index]!];
  }
  return out;
}
