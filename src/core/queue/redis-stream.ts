import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisStreamConfig } from '../config.js';
import { safeHeaders, streamEvent, type StreamFields } from './queue-event.js';
import { RedisLink, reconnectDelayMs, redisUrlProblem, type QueueDeps, type RedisLinkOptions } from './redis-link.js';

/**
 * `redis-stream` provider: a consumer group member that stores every entry, **then** XACKs it
 * (store-then-ack, DESIGN §8), so an entry is acknowledged only once it is committed.
 *
 * Recovery, in the order it runs on every (re)connect:
 * 1. XGROUP CREATE … MKSTREAM (BUSYGROUP ignored). The first time at `$` (a new provider starts
 *    at the tail); if the group vanishes while we run (Redis restarted without persistence, or
 *    someone destroyed it) it is re-created at `0`, so entries added before we reconnected are
 *    not skipped. Anything read twice dedupes on the entry id.
 * 2. Drain this consumer's own pending entries (`XREADGROUP … 0`): entries we were given but
 *    never acked because we crashed, or because the connection dropped before the reply arrived.
 * 3. `XREADGROUP … BLOCK … >` for new entries, and every `claim_idle_ms` an XAUTOCLAIM of
 *    entries idle that long (a consumer that died, or one of ours whose insert kept failing).
 *
 * A poison entry — one delivered more than `max_deliveries` times without being stored — is
 * recorded as a rejection and acked, so it cannot block the group forever. A storage outage is
 * not poison: failed inserts are retried in place with backoff (without redelivery), and an
 * entry is declared poison only when the rejection row itself can be written.
 */

export const READ_COUNT = 100;
export const READ_BLOCK_MS = 5_000;
export const MIN_READ_BLOCK_MS = 100;

export interface StreamEntry {
  id: string;
  /** null when the entry was deleted (XDEL, trimming) while it was pending. */
  fields: StreamFields | null;
}

export interface RedisStreamAdapterOptions extends RedisLinkOptions {
  /** Test seam: runs after an entry is stored and before it is acked. */
  afterStore?: (entryId: string) => Promise<void> | void;
}

/** Stable across restarts of this machine, so a restarted switchboard finds its pending entries. */
export function defaultConsumerName(): string {
  return `switchboard@${hostname()}`;
}

export class RedisStreamAdapter {
  readonly consumer: string;
  private link: RedisLink | undefined;
  private loop: Promise<void> | undefined;
  private handling: Promise<void> | undefined;
  private whoami = 'unknown';
  /** Whether this adapter has seen its group exist (decides `$` vs `0` on re-creation). */
  private groupSeen = false;
  /** Inserts are failing: the status says so until one succeeds. */
  private storeFailing = false;

  constructor(
    private readonly deps: QueueDeps,
    private readonly config: RedisStreamConfig,
    private readonly url: string,
    private readonly options: RedisStreamAdapterOptions = {},
  ) {
    this.consumer = config.consumer ?? defaultConsumerName();
  }

  start(): void {
    const problem = redisUrlProblem(this.url);
    if (problem) {
      this.deps.providers.setRunStatus(this.config.name, { status: 'error', last_error: problem });
      return;
    }
    const link = new RedisLink(this.deps, this.config.name, this.url, this.options);
    this.link = link;
    link.connect();
    this.loop = this.run(link);
  }

  /** Finishes the entry in hand (store and ack), then disconnects. */
  async stop(): Promise<void> {
    const { link } = this;
    if (!link) return;
    link.stop();
    await this.handling?.catch(() => {
      // Its failure is the loop's to report; stopping only waits for it to settle.
    });
    link.close();
    await this.loop;
  }

  private async run(link: RedisLink): Promise<void> {
    let failures = 0;
    while (!link.stopped) {
      if (!(await link.ready())) return;
      try {
        this.whoami = await link.whoami();
        await this.ensureGroup(link);
        link.connected();
        failures = 0;
        await this.drainOwnPending(link);
        let lastClaim = 0;
        // Wake up in time for the next XAUTOCLAIM, but never spin on a tiny claim_idle_ms.
        const blockMs = Math.max(MIN_READ_BLOCK_MS, Math.min(READ_BLOCK_MS, this.config.claim_idle_ms));
        while (!link.stopped) {
          if (Date.now() - lastClaim >= this.config.claim_idle_ms) {
            await this.claimStale(link);
            lastClaim = Date.now();
          }
          const entries = parseReadReply(
            await link.redis.callBuffer('XREADGROUP', 'GROUP', this.config.group, this.consumer, 'COUNT', READ_COUNT, 'BLOCK', blockMs, 'STREAMS', this.config.stream, '>'),
          );
          for (const entry of entries) await this.process(link, entry, 1);
        }
      } catch (error) {
        if (link.stopped) return;
        if (isNoGroup(error)) continue; // the group vanished: re-create it and drain again
        failures++;
        // A dropped connection is reported by the link itself, with the real cause; the
        // command that it aborted would only add "Connection is closed".
        if (link.isReady) link.failed(error);
        // A connection error waits for 'ready' at the top; a command error (WRONGTYPE, NOPERM…)
        // would otherwise spin.
        await link.sleep(reconnectDelayMs(failures));
      }
    }
  }

  private async ensureGroup(link: RedisLink): Promise<void> {
    const { stream, group } = this.config;
    try {
      await link.redis.call('XGROUP', 'CREATE', stream, group, this.groupSeen ? '0' : '$', 'MKSTREAM');
      if (this.groupSeen) this.deps.logger.warn(`queue "${this.config.name}": consumer group ${group} was missing on ${stream}; re-created it from the start of the stream`);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('BUSYGROUP')) throw error;
    }
    this.groupSeen = true;
  }

  private async drainOwnPending(link: RedisLink): Promise<void> {
    let after = '0';
    while (!link.stopped) {
      const entries = parseReadReply(
        await link.redis.callBuffer('XREADGROUP', 'GROUP', this.config.group, this.consumer, 'COUNT', READ_COUNT, 'STREAMS', this.config.stream, after),
      );
      if (entries.length === 0) return;
      const counts = await this.deliveryCounts(link, entries);
      for (const entry of entries) await this.process(link, entry, counts.get(entry.id) ?? 1);
      after = entries[entries.length - 1]!.id;
    }
  }

  private async claimStale(link: RedisLink): Promise<void> {
    let cursor = '0-0';
    do {
      const reply = await link.redis.callBuffer('XAUTOCLAIM', this.config.stream, this.config.group, this.consumer, this.config.claim_idle_ms, cursor, 'COUNT', READ_COUNT);
      const claimed = parseAutoClaimReply(reply);
      cursor = claimed.cursor;
      const counts = await this.deliveryCounts(link, claimed.entries);
      for (const entry of claimed.entries) await this.process(link, entry, counts.get(entry.id) ?? 1);
    } while (cursor !== '0-0' && !link.stopped);
  }

  /** Times each entry has been delivered, including this delivery (XPENDING extended form). */
  private async deliveryCounts(link: RedisLink, entries: StreamEntry[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (entries.length === 0) return counts;
    const reply = await link.redis.call(
      'XPENDING', this.config.stream, this.config.group, entries[0]!.id, entries[entries.length - 1]!.id, entries.length, this.consumer,
    );
    if (Array.isArray(reply)) {
      for (const row of reply) {
        if (Array.isArray(row) && typeof row[0] === 'string' && typeof row[3] === 'number') counts.set(row[0], row[3]);
      }
    }
    return counts;
  }

  private async process(link: RedisLink, entry: StreamEntry, deliveries: number): Promise<void> {
    this.handling = this.handle(link, entry, deliveries);
    try {
      await this.handling;
    } finally {
      this.handling = undefined;
    }
  }

  private async handle(link: RedisLink, entry: StreamEntry, deliveries: number): Promise<void> {
    const { deps, config } = this;
    if (entry.fields === null) {
      // Deleted while pending: nothing to store, and nothing to wait for.
      return await this.ack(link, entry.id);
    }
    const headers = safeHeaders({ 'x-redis-stream': config.stream, 'x-redis-entry-id': entry.id, 'x-redis-group': config.group });
    const event = streamEvent({ provider: config.name, verify_detail: `redis acl: ${this.whoami}`, headers }, entry.id, entry.fields, config.type_field);

    // Each earlier delivery of an entry that is still pending ended without an ack. One that
    // already failed max_deliveries times (it crashed the consumer, say) is not tried again.
    let failedTries = deliveries - 1;
    let lastError = `it was delivered ${deliveries} times and never acknowledged (did it crash the consumer?)`;
    const poison = () => failedTries >= config.max_deliveries && this.rejectPoison(link, entry.id, event.payload, headers, failedTries, lastError);
    if (await poison()) return await this.ack(link, entry.id);
    const test = deps.testMarks?.claimMessage(config.name, event.payload) ?? null;
    if (test) event.origin = 'test';
    for (;;) {
      try {
        const result = await deps.store.insertEvent(event);
        void result.visible.then((visible) => visible && deps.bus.emit(result.duplicate ? 'duplicate' : 'event', result.event));
        test?.stored(result.event);
        if (this.storeFailing) link.connected();
        this.storeFailing = false;
        break;
      } catch (error) {
        if (link.stopped) return; // left pending: redelivered on the next start
        failedTries++;
        lastError = link.redact((error as Error).message);
        deps.logger.error(`queue "${config.name}": storing entry ${entry.id} failed (${failedTries}/${config.max_deliveries}): ${lastError}`);
        this.storeFailing = true;
        link.failed(new Error(`storing entries failed: ${lastError}`));
        // Storing is always tried again first, so an entry that waited out a database outage
        // is stored, not rejected, once the database is back.
        if (await poison()) return await this.ack(link, entry.id);
        await link.sleep(reconnectDelayMs(failedTries));
        if (link.stopped) return;
      }
    }
    await this.options.afterStore?.(entry.id);
    await this.ack(link, entry.id);
  }

  private async ack(link: RedisLink, entryId: string): Promise<void> {
    await link.redis.xack(this.config.stream, this.config.group, entryId);
  }

  /** Records a poison entry as a rejection; true when that worked (then the caller acks). */
  private async rejectPoison(
    link: RedisLink,
    entryId: string,
    payload: Uint8Array,
    headers: Record<string, string>,
    failedTries: number,
    lastError: string,
  ): Promise<boolean> {
    const { deps, config } = this;
    try {
      const rejection = await deps.store.insertRejection({
        provider: config.name,
        reason: 'poison_entry',
        hint: `stream entry ${entryId} was not stored after ${failedTries} tries (max_deliveries ${config.max_deliveries}); it was acknowledged so the group can move on. Last problem: ${lastError}`,
        headers,
        body_size: payload.byteLength,
        body_sha256: createHash('sha256').update(payload).digest('hex'),
        source_ip: null,
      });
      deps.bus.emit('rejection', rejection);
      deps.logger.warn(`queue "${config.name}": entry ${entryId} rejected as poison after ${failedTries} tries`);
      return true;
    } catch (error) {
      // The store is down, so the entry is not the problem: keep it and try again.
      deps.logger.error(`queue "${config.name}": could not record poison entry ${entryId}: ${link.redact((error as Error).message)}`);
      return false;
    }
  }
}

function isNoGroup(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOGROUP');
}

const text = (value: unknown): string | null => (Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'string' ? value : null);

/** `[id, [field, value, …] | null]` → StreamEntry; anything else is skipped. */
function parseEntry(raw: unknown): StreamEntry | null {
  if (!Array.isArray(raw)) return null;
  const id = text(raw[0]);
  if (id === null) return null;
  const flat: unknown = raw[1];
  if (!Array.isArray(flat)) return { id, fields: null };
  const fields: StreamFields = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = text(flat[i]);
    const value: unknown = flat[i + 1];
    if (name !== null && Buffer.isBuffer(value)) fields.push([name, value]);
  }
  return { id, fields };
}

/** XREADGROUP (RESP2): null on timeout, else `[[stream, [entry, …]]]`. */
export function parseReadReply(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const entries: StreamEntry[] = [];
  for (const perStream of reply) {
    if (!Array.isArray(perStream) || !Array.isArray(perStream[1])) continue;
    for (const raw of perStream[1] as unknown[]) {
      const entry = parseEntry(raw);
      if (entry) entries.push(entry);
    }
  }
  return entries;
}

/** XAUTOCLAIM: `[next cursor, [entry, …], [deleted id, …]]` (the third part since Redis 7). */
export function parseAutoClaimReply(reply: unknown): { cursor: string; entries: StreamEntry[] } {
  if (!Array.isArray(reply)) return { cursor: '0-0', entries: [] };
  const entries = Array.isArray(reply[1]) ? (reply[1] as unknown[]).map(parseEntry).filter((entry): entry is StreamEntry => entry !== null) : [];
  return { cursor: text(reply[0]) ?? '0-0', entries };
}
