import type { EventListItem, IndexProgress, LastReplay } from '../../../shared/api';
import type { EventSummary } from '../../../shared/events';

/**
 * The rows of the Events list: pages loaded from the server (newest first) plus live arrivals
 * on top. Live rows are appended to their own array and read back to front, so an insert is
 * O(1) even with 100,000 rows loaded, and `at(i)` stays O(1) for the virtualized list.
 *
 * Each event's last replay is kept beside the rows, so a replay arriving live (a forward rule's,
 * say) marks its row without touching the arrays.
 */
export class EventLog {
  /** Live arrivals, oldest first. */
  private head: EventSummary[] = [];
  /** Loaded pages, newest first. */
  private tail: EventSummary[] = [];
  private readonly ids = new Set<number>();
  private readonly lastReplays = new Map<number, LastReplay>();
  private listeners = new Set<() => void>();
  /** Bumped on every change; what useSyncExternalStore compares. */
  version = 0;
  nextCursor: string | undefined;
  complete = false;
  /** Set while a search that ran out of time goes on page by page: how far back it has read. */
  searchedBackTo: string | undefined;
  /** Beside searchedBackTo while the search index is still being built (DESIGN §17). */
  indexProgress: IndexProgress | undefined;

  get length(): number {
    return this.head.length + this.tail.length;
  }

  at(index: number): EventSummary | undefined {
    const headLength = this.head.length;
    return index < headLength ? this.head[headLength - 1 - index] : this.tail[index - headLength];
  }

  /** Newest id in the list (0 when empty). */
  topId(): number {
    return this.at(0)?.id ?? 0;
  }

  indexOf(id: number): number {
    for (let i = this.head.length - 1; i >= 0; i--) if (this.head[i]!.id === id) return this.head.length - 1 - i;
    const inTail = this.tail.findIndex((event) => event.id === id);
    return inTail < 0 ? -1 : this.head.length + inTail;
  }

  has(id: number): boolean {
    return this.ids.has(id);
  }

  lastReplay(id: number): LastReplay | null {
    return this.lastReplays.get(id) ?? null;
  }

  /** A replay of an event, from a page or a live message; an older one than known is ignored. */
  noteReplay(eventId: number, replay: LastReplay): void {
    const known = this.lastReplays.get(eventId);
    if (known && known.created_at > replay.created_at) return;
    const { delivered, response_status, requested_by, created_at } = replay;
    this.lastReplays.set(eventId, { delivered, response_status, requested_by, created_at });
    // An event not (yet) in the list keeps its mark for when it arrives, without a render now.
    if (this.ids.has(eventId)) this.changed();
  }

  /** Live events, oldest first. Returns how many were new (duplicates are dropped). */
  prepend(events: readonly (EventSummary | EventListItem)[]): number {
    let added = 0;
    for (const event of events) {
      if (this.ids.has(event.id)) continue;
      this.noteLast(event);
      this.ids.add(event.id);
      this.head.push(event);
      added++;
    }
    if (added > 0) this.changed();
    return added;
  }

  /** The next page from the server, newest first (a search's may be short, even empty: `searchedBackTo`). */
  appendPage(
    events: readonly (EventSummary | EventListItem)[],
    nextCursor: string | undefined,
    searchedBackTo?: string,
    indexProgress?: IndexProgress,
  ): void {
    for (const event of events) {
      if (this.ids.has(event.id)) continue;
      this.noteLast(event);
      this.ids.add(event.id);
      this.tail.push(event);
    }
    this.nextCursor = nextCursor;
    this.complete = nextCursor === undefined;
    this.searchedBackTo = searchedBackTo;
    this.indexProgress = indexProgress;
    this.changed();
  }

  reset(): void {
    this.head = [];
    this.tail = [];
    this.ids.clear();
    this.lastReplays.clear();
    this.nextCursor = undefined;
    this.complete = false;
    this.searchedBackTo = undefined;
    this.indexProgress = undefined;
    this.changed();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  private noteLast(event: EventSummary | EventListItem): void {
    const last = 'last_replay' in event ? event.last_replay : null;
    const known = this.lastReplays.get(event.id);
    if (last && !(known && known.created_at > last.created_at)) this.lastReplays.set(event.id, last);
  }

  private changed(): void {
    this.version++;
    for (const listener of this.listeners) listener();
  }
}
