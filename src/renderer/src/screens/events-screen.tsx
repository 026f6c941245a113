import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type RefObject } from 'react';
import { indexingNote, type EventListItem, type LastReplay } from '../../../shared/api';
import type { EventSummary, TrustMode } from '../../../shared/events';
import { replayFailed, TRUST_MODES } from '../../../shared/events';
import { useAppData } from '../app-data';
import { CopyButton } from '../components/copy-button';
import { EmptyEvents, NoProviders } from '../components/empty-states';
import { SaveAsSuite } from '../components/save-as-suite';
import { DriftBadge } from '../components/shape-view';
import { OriginBadge } from '../components/send-test-event';
import { AttemptsMark } from '../components/attempts';
import { EventTrustBadge } from '../components/trust-badge';
import { formatBytes } from '../lib/bytes';
import { shellQuote } from '../lib/curl';
import { EventLog } from '../lib/event-log';
import { filtersToQuery, hasFilters, listQuery, matchesFilters, NO_FILTERS, viewFromParams, viewToParams, type EventFilters } from '../lib/filters';
import { paramsFromHash, replaceView, screenFromHash } from '../lib/nav';
import { formatListTime, msUntilTomorrow } from '../lib/time';
import { formatCount, useActivity } from '../lib/activity';
import { useNavigate } from '../navigation';
import { EventDetailPane } from './event-detail';

export const ROW_HEIGHT_PX = 34;
/**
 * Below this list width (the detail pane open at 1280 px, or any narrow window) a row is two
 * lines: the type with its badges and the trust on the first, time, provider, replay mark, size
 * and id on the second — so nothing is cut off (issue #26.6).
 */
export const TWO_LINE_BELOW_PX = 760;
export const TWO_LINE_ROW_HEIGHT_PX = 48;
/** With a search, every row has a third line: the excerpt around the match. */
export const SNIPPET_ROW_HEIGHT_PX = 66;
/** The first page is small so the list shows fast; later pages are larger for fast scrolling. */
const FIRST_PAGE_SIZE = 200;
const PAGE_SIZE = 500;
/** Live rows are added at most this often: a list changing faster than this is only a blur. */
const LIVE_FLUSH_MS = 100;
/** Searches answer in milliseconds at a million events (docs/benchmarks.md): a short pause is enough. */
const SEARCH_DEBOUNCE_MS = 150;
/** How many rows are looked at for the type box's suggestions. */
const TYPE_SUGGESTION_ROWS = 2000;

/**
 * The Events screen: a virtualized list that fills up live, filters, and the detail pane.
 * Keyboard: j/k move, Enter opens, r replays the open event, / searches, Escape closes.
 * The filters and the open event are the address (`#/events?type=push&event=42`): shareable,
 * kept across a reload, and followed when the address changes.
 */
export function EventsScreen() {
  const { client, providers, listen } = useAppData();
  const log = useMemo(() => new EventLog(), []);
  useSyncExternalStore(log.subscribe, log.getVersion);
  const [initial] = useState(() => viewFromParams(paramsFromHash(window.location.hash)));
  const [filters, setFilters] = useState<EventFilters>(() => (searchable(initial.filters.search.trim()) ? initial.filters : { ...initial.filters, search: '' }));
  const [searchText, setSearchText] = useState(initial.filters.search);
  const [typeText, setTypeText] = useState(initial.filters.event_type);
  const [cursorId, setCursorId] = useState<number | null>(initial.eventId);
  const [openId, setOpenId] = useState<number | null>(initial.eventId);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [firstPageLoaded, setFirstPageLoaded] = useState(false);
  /** Events picked with Ctrl/⌘-click or `x`, for "Save as suite…". */
  const [selected, setSelected] = useState<ReadonlySet<number>>(() => new Set());
  const toggleSelected = useCallback(
    (id: number) =>
      setSelected((current) => {
        const next = new Set(current);
        if (!next.delete(id)) next.add(id);
        return next;
      }),
    [],
  );
  /** An event whose replay was asked for with `r`; the replay panel sends it once loaded. */
  const [pendingReplay, setPendingReplay] = useState<number | null>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const paneRef = useRef<HTMLElement>(null);
  const twoLine = useNarrowerThan(paneRef, TWO_LINE_BELOW_PX);
  const searchRef = useRef<HTMLInputElement>(null);
  const generation = useRef(0);
  const loading = useRef(false);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;

  // ---- loading pages -------------------------------------------------------------------
  const loadMore = useCallback(async () => {
    if (loading.current || log.complete) return;
    loading.current = true;
    const mine = generation.current;
    try {
      const page = await client.listEvents({ ...listQuery(filtersRef.current), ...(log.nextCursor ? { limit: PAGE_SIZE, cursor: log.nextCursor } : { limit: FIRST_PAGE_SIZE }) });
      if (mine !== generation.current) return;
      log.appendPage(page.events, page.next_cursor, page.searched_back_to, page.index_progress);
      setLoadError(null);
      setFirstPageLoaded(true);
    } catch (error) {
      if (mine === generation.current) setLoadError((error as Error).message);
    } finally {
      if (mine === generation.current) loading.current = false;
    }
  }, [client, log]);

  useEffect(() => {
    generation.current++;
    loading.current = false;
    log.reset();
    setFirstPageLoaded(false);
    void loadMore();
  }, [filters, log, loadMore]);

  // The search and type boxes filter after a pause in typing, not on every key. A search the
  // server would refuse (no 3 letters or digits in a row) is not sent: the box says why, once.
  const searchProblem = searchText.trim() !== '' && !searchable(searchText.trim()) ? 'A search needs 3 letters or digits in a row (a word or an id).' : null;
  useEffect(() => {
    const wanted = searchable(searchText.trim()) ? searchText : '';
    const timer = setTimeout(() => setFilters((current) => (current.search === wanted ? current : { ...current, search: wanted })), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [searchText]);
  useEffect(() => {
    const timer = setTimeout(() => setFilters((current) => (current.event_type === typeText ? current : { ...current, event_type: typeText })), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [typeText]);

  // ---- the address ---------------------------------------------------------------------------
  useEffect(() => {
    replaceView('events', viewToParams({ filters, eventId: openId }));
  }, [filters, openId]);
  // An address typed, pasted or reached with Back/Forward.
  useEffect(() => {
    const onHash = () => {
      if (screenFromHash(window.location.hash) !== 'events') return;
      const view = viewFromParams(paramsFromHash(window.location.hash));
      setFilters((current) => (JSON.stringify(current) === JSON.stringify(view.filters) ? current : view.filters));
      setSearchText(view.filters.search);
      setTypeText(view.filters.event_type);
      setOpenId(view.eventId);
      if (view.eventId !== null) setCursorId(view.eventId);
      scrollPending.current = view.eventId;
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // Rows not from today show their date: re-render them when the day changes.
  const [today, setToday] = useState(() => new Date().toDateString());
  useEffect(() => {
    const timer = setTimeout(() => setToday(new Date().toDateString()), msUntilTomorrow() + 1000);
    return () => clearTimeout(timer);
  }, [today]);

  // ---- live arrivals -------------------------------------------------------------------
  const pendingShift = useRef(0);
  useEffect(() => {
    let buffer: EventSummary[] = [];
    let frame = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let lastFlush = 0;
    let headCheck: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      frame = 0;
      timer = undefined;
      lastFlush = performance.now();
      const batch = buffer;
      buffer = [];
      const added = log.prepend(batch);
      if (listRef.current && listRef.current.scrollTop > 0) pendingShift.current += added;
    };
    // However many rows arrive, at most one render per LIVE_FLUSH_MS, in an animation frame.
    const schedule = () => {
      if (frame || timer) return;
      const wait = Math.max(0, lastFlush + LIVE_FLUSH_MS - performance.now());
      timer = setTimeout(() => {
        if (document.visibilityState === 'visible') frame = requestAnimationFrame(flush);
        else flush();
      }, wait);
    };
    // With a payload search (or after a reconnect) only the server knows what matches.
    const checkHead = () => {
      clearTimeout(headCheck);
      headCheck = setTimeout(() => {
        const mine = generation.current;
        void client.listEvents({ ...listQuery(filtersRef.current), limit: PAGE_SIZE }).then((page) => {
          if (mine !== generation.current) return;
          const top = log.topId();
          buffer.push(...page.events.filter((event) => event.id > top).reverse());
          schedule();
        });
      }, 150);
    };
    const unlisten = listen((message) => {
      if (message === null) return checkHead();
      // A forward rule's or an agent's replay marks its row when it failed.
      if (message.type === 'replay') return log.noteReplay(message.replay.event_id, message.replay);
      if (message.type !== 'event') return;
      const match = matchesFilters(message.event, filtersRef.current);
      if (match === 'yes') {
        buffer.push(message.event);
        schedule();
      } else if (match === 'unknown') {
        checkHead();
      }
    });
    return () => {
      unlisten();
      clearTimeout(headCheck);
      clearTimeout(timer);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [client, listen, log]);

  // The list calls back when its last rendered row nears the end of what is loaded.
  const onNearEnd = useCallback(() => void loadMore(), [loadMore]);
  const scrollToIndex = useRef<(index: number, align?: 'auto' | 'center') => void>(() => undefined);
  // An event opened by its address (a link, a reload, Back) is scrolled to once its row is loaded.
  const scrollPending = useRef<number | null>(initial.eventId);
  useEffect(() => {
    if (scrollPending.current === null) return;
    const index = log.indexOf(scrollPending.current);
    if (index < 0) return;
    scrollPending.current = null;
    scrollToIndex.current(index, 'center');
  }, [log, log.version]);
  const pick = useCallback(
    (id: number, toggle = false) => {
      setCursorId(id);
      if (toggle) toggleSelected(id);
      else setOpenId(id);
    },
    [toggleSelected],
  );

  // ---- keyboard ----------------------------------------------------------------------------
  const moveCursor = useCallback(
    (delta: number) => {
      if (log.length === 0) return;
      const current = cursorId === null ? -1 : log.indexOf(cursorId);
      const next = Math.max(0, Math.min(log.length - 1, current < 0 ? 0 : current + delta));
      const event = log.at(next);
      if (!event) return;
      setCursorId(event.id);
      scrollToIndex.current(next);
    },
    [cursorId, log],
  );

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target as HTMLElement | null;
      const typing = target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
      if (typing) {
        if (event.key === 'Escape' && target) target.blur();
        return;
      }
      if (event.key === '/') {
        event.preventDefault();
        searchRef.current?.focus();
      } else if (event.key === 'j' || (event.key === 'ArrowDown' && target === listRef.current)) {
        event.preventDefault();
        moveCursor(1);
      } else if (event.key === 'k' || (event.key === 'ArrowUp' && target === listRef.current)) {
        event.preventDefault();
        moveCursor(-1);
      } else if (event.key === 'Enter' && cursorId !== null && (target === listRef.current || target === document.body)) {
        event.preventDefault();
        setOpenId(cursorId);
      } else if (event.key === 'r') {
        const id = openId ?? cursorId;
        if (id === null) return;
        event.preventDefault();
        setOpenId(id);
        setPendingReplay(id);
      } else if (event.key === 'x' && cursorId !== null) {
        event.preventDefault();
        toggleSelected(cursorId);
      } else if (event.key === 'Escape') {
        setOpenId(null);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [cursorId, moveCursor, openId, toggleSelected]);

  // ---- render ------------------------------------------------------------------------------
  const providerNames = providers?.map((view) => view.status.name) ?? [];
  // Types seen in this visit, kept while the filters narrow the list, so the box offers them.
  const knownTypes = useRef(new Set<string>());
  const seenTypes = useMemo(() => {
    for (let i = 0; i < Math.min(log.length, TYPE_SUGGESTION_ROWS); i++) {
      const type = log.at(i)?.event_type;
      if (type) knownTypes.current.add(type);
    }
    return [...knownTypes.current].sort();
  }, [log, log.version]); // log is mutable: its version says when it changed

  const filtered = hasFilters({ ...filters, search: searchText, event_type: typeText });
  // A search that reads on page by page (each answer is one time slice) is not empty until done.
  const empty = firstPageLoaded && log.length === 0 && log.complete;
  const searching = filters.search.trim() !== '';
  const { activity } = useActivity({ client, listen });
  const navigate = useNavigate();

  return (
    <div className={`events-screen${openId !== null ? ' with-detail' : ''}`}>
      <section ref={paneRef} className={`events-list-pane${twoLine || searching ? ' two-line' : ''}${searching ? ' with-snippets' : ''}`} aria-label="Events">
        <form className="filters" role="search" aria-label="Filter events" onSubmit={(event) => event.preventDefault()}>
          <label className="field search-field">
            <span className="visually-hidden">Search payloads</span>
            <input
              ref={searchRef}
              type="search"
              placeholder="Search payloads  ( / )"
              value={searchText}
              onChange={(event) => setSearchText(event.target.value)}
              aria-keyshortcuts="/"
              aria-invalid={searchProblem !== null}
              aria-describedby={searchProblem ? 'search-problem' : undefined}
            />
            {searchProblem && (
              <span id="search-problem" className="field-error small">
                {searchProblem}
              </span>
            )}
          </label>
          <label className="field">
            <span className="visually-hidden">Provider</span>
            <select aria-label="Provider" value={filters.provider} onChange={(event) => setFilters({ ...filters, provider: event.target.value })}>
              <option value="">All providers</option>
              {providerNames.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
              {/* A filter from an address or a removed provider: still shown, and said so. */}
              {filters.provider !== '' && providers !== null && !providerNames.includes(filters.provider) && <option value={filters.provider}>{filters.provider} (not configured)</option>}
            </select>
          </label>
          <label className="field">
            <span className="visually-hidden">Event type</span>
            <input
              aria-label="Event type"
              title="Types starting with this text: “pull_request” matches pull_request.opened and pull_request.closed"
              list="event-type-options"
              placeholder="Any type"
              value={typeText}
              onChange={(event) => setTypeText(event.target.value)}
            />
            <datalist id="event-type-options">
              {seenTypes.map((type) => (
                <option key={type} value={type} />
              ))}
            </datalist>
          </label>
          <label className="field">
            <span className="visually-hidden">Trust</span>
            <select aria-label="Trust" value={filters.trust_mode} onChange={(event) => setFilters({ ...filters, trust_mode: event.target.value as TrustMode | '' })}>
              <option value="">Any trust</option>
              {TRUST_MODES.map((mode) => (
                <option key={mode} value={mode}>
                  {mode}
                </option>
              ))}
            </select>
          </label>
          <label className="field check-field" title="Only events whose payload differs from their type's usual shape (Shapes)">
            <input type="checkbox" checked={filters.drift} onChange={(event) => setFilters({ ...filters, drift: event.target.checked })} />
            Drift only
          </label>
          {filtered && (
            <button
              type="button"
              className="quiet-button"
              onClick={() => {
                setSearchText('');
                setTypeText('');
                setFilters(NO_FILTERS);
              }}
            >
              Clear filters
            </button>
          )}
          <ExportButton filters={{ ...filters, search: searchText, event_type: typeText }} />
          <SaveAsSuite filters={{ ...filters, search: searchText, event_type: typeText }} selected={[...selected]} onSaved={() => setSelected(new Set())} />
        </form>

        {loadError && (
          <p role="alert" className="error-banner">
            Could not load events: {loadError}
          </p>
        )}

        {empty && (
          <div className="events-empty">
            {!filtered && providers?.length === 0 && <NoProviders />}
            {!filtered && providers && providers.length > 0 && <EmptyEvents providers={providers} />}
            {filtered && (
              <div className="empty-state">
                <h2>No events match these filters</h2>
                <p>Payload search matches raw bytes and event types. Clear a filter to widen it.</p>
              </div>
            )}
          </div>
        )}

        <div className="event-row event-header" aria-hidden="true" hidden={empty || twoLine || searching}>
          <span>Received</span>
          <span>Provider</span>
          <span>Type</span>
          <span>Trust</span>
          <span>Replay</span>
          <span className="num">Size</span>
          <span className="num">ID</span>
        </div>
        <EventList
          log={log}
          version={log.version}
          rowHeight={searching ? SNIPPET_ROW_HEIGHT_PX : twoLine ? TWO_LINE_ROW_HEIGHT_PX : ROW_HEIGHT_PX}
          search={searching ? filters.search.trim() : ''}
          listRef={listRef}
          pendingShift={pendingShift}
          scrollToIndex={scrollToIndex}
          cursorId={cursorId}
          openId={openId}
          selected={selected}
          today={today}
          loadError={loadError}
          hidden={empty}
          onPick={pick}
          onNearEnd={onNearEnd}
        />
        <div className="list-footer muted">
          <span aria-live="polite">
            {log.length.toLocaleString()} event{log.length === 1 ? '' : 's'} loaded{log.complete ? '' : ' (scroll for more)'}
            {activity && (
              <span title="estimated from the range of event ids; the log is never counted row by row">
                {' '}
                · about {activity.events_estimate.toLocaleString()} stored (estimate)
              </span>
            )}
            {selected.size > 0 && (
              <>
                {' '}
                · <strong>{selected.size} selected</strong>{' '}
                <button type="button" className="link-button" onClick={() => setSelected(new Set())}>
                  clear
                </button>
              </>
            )}
          </span>
          {activity && activity.rejections > 0 && (
            <button type="button" className="count-button bad small" onClick={() => navigate('providers', 'show-rejections')} title="Deliveries that failed verification, with a diagnosis of each">
              {formatCount(activity.rejections, activity.count_cap)} rejection{activity.rejections === 1 ? '' : 's'}
            </button>
          )}
          <span className="keys"> j/k move · Enter open · r replay · / search · x select</span>
        </div>
      </section>
      {openId !== null && <EventDetailPane key={openId} eventId={openId} pendingReplay={pendingReplay === openId} onReplayStarted={() => setPendingReplay(null)} onClose={() => setOpenId(null)} />}
    </div>
  );
}

/**
 * The virtualized rows. Its own component so that scrolling re-renders only the list, and rows
 * are memoized so a live insert re-renders only rows whose position or state changed.
 */
function EventList({
  log,
  version,
  rowHeight,
  search,
  listRef,
  pendingShift,
  scrollToIndex,
  cursorId,
  openId,
  selected,
  today,
  loadError,
  hidden,
  onPick,
  onNearEnd,
}: {
  log: EventLog;
  version: number;
  rowHeight: number;
  /** The active search, to mark in each row's excerpt ('' for none). */
  search: string;
  listRef: RefObject<HTMLDivElement | null>;
  pendingShift: RefObject<number>;
  scrollToIndex: RefObject<(index: number, align?: 'auto' | 'center') => void>;
  cursorId: number | null;
  openId: number | null;
  selected: ReadonlySet<number>;
  /** The local date, so rows re-render (with their date) after midnight. */
  today: string;
  loadError: string | null;
  hidden: boolean;
  onPick: (id: number, toggle?: boolean) => void;
  onNearEnd: () => void;
}) {
  const count = log.length + (log.complete ? 0 : 1);
  // The virtualizer recomputes every row's position (O(rows)) when this function changes, so it
  // changes only with the rows, not on every scroll.
  const getItemKey = useCallback((index: number) => log.at(index)?.id ?? 'more', [log, version]);
  const getScrollElement = useCallback(() => listRef.current, [listRef]);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement,
    estimateSize: () => rowHeight,
    overscan: 12,
    getItemKey,
    // flushSync on every scroll event forces a synchronous render per event; batching is smoother.
    useFlushSync: false,
  });
  // Every row's size changes at once when the list switches between one and two lines.
  useLayoutEffect(() => virtualizer.measure(), [rowHeight, virtualizer]);
  scrollToIndex.current = (index, align = 'auto') => virtualizer.scrollToIndex(index, { align });
  const items = virtualizer.getVirtualItems();

  // Keep the rows in view still while new ones arrive above them (unless at the very top).
  // While scrolled down, what arrived above is counted in a hint that takes you up to it.
  const [newAbove, setNewAbove] = useState(0);
  useLayoutEffect(() => {
    if (pendingShift.current > 0 && listRef.current) {
      listRef.current.scrollTop += pendingShift.current * rowHeight;
      const arrived = pendingShift.current;
      setNewAbove((count) => count + arrived);
    }
    pendingShift.current = 0;
  }, [version, listRef, pendingShift, rowHeight]);
  useEffect(() => {
    const list = listRef.current;
    if (!list) return;
    const onScroll = () => {
      if (list.scrollTop < rowHeight / 2) setNewAbove(0);
    };
    list.addEventListener('scroll', onScroll, { passive: true });
    return () => list.removeEventListener('scroll', onScroll);
  }, [listRef, rowHeight]);
  // A new filter empties the list: nothing is above any more.
  useEffect(() => {
    if (log.length === 0) setNewAbove(0);
  }, [log, version]);

  const lastIndex = items.at(-1)?.index ?? 0;
  useEffect(() => {
    if (!log.complete && lastIndex >= log.length - 40) onNearEnd();
  }, [lastIndex, log, version, onNearEnd]);

  const cursorIndex = cursorId === null ? -1 : log.indexOf(cursorId);
  const setSize = log.complete ? log.length : -1;
  return (
    <div className="event-list-frame" hidden={hidden}>
      {newAbove > 0 && (
        <button type="button" className="new-events-hint" onClick={() => listRef.current?.scrollTo({ top: 0 })}>
          ↑ {newAbove.toLocaleString()} new event{newAbove === 1 ? '' : 's'}
        </button>
      )}
    <div
      ref={listRef}
      className="event-list"
      role="listbox"
      aria-label="Events, newest first"
      tabIndex={0}
      aria-activedescendant={cursorIndex >= 0 ? `event-row-${cursorId}` : undefined}
      hidden={hidden}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {items.map((item) => {
          const event = log.at(item.index);
          if (!event) {
            return (
              <div key={item.key} className="event-row loading-row" style={{ transform: `translateY(${item.start}px)` }} role="presentation">
                {loadError
                  ? log.length > 0
                    ? 'Could not load more.'
                    : ''
                  : log.searchedBackTo
                    ? `Searching older events… (searched back to ${formatListTime(log.searchedBackTo)}${log.indexProgress ? `; ${indexingNote(log.indexProgress)}` : ''})`
                    : 'Loading…'}
              </div>
            );
          }
          return (
            <EventRow
              key={item.key}
              event={event}
              position={item.index + 1}
              setSize={setSize}
              start={item.start}
              isCursor={event.id === cursorId}
              isOpen={event.id === openId}
              isSelected={selected.has(event.id)}
              lastReplay={log.lastReplay(event.id)}
              today={today}
              snippet={search ? ((event as EventListItem).snippet ?? null) : null}
              search={search}
              onPick={onPick}
            />
          );
        })}
      </div>
    </div>
    </div>
  );
}

export const EventRow = memo(function EventRow({
  event,
  position,
  setSize,
  start,
  isCursor,
  isOpen,
  isSelected = false,
  lastReplay,
  snippet = null,
  search = '',
  onPick,
}: {
  event: EventSummary;
  position: number;
  setSize: number;
  start: number;
  isCursor: boolean;
  isOpen: boolean;
  /** Picked for "Save as suite…". */
  isSelected?: boolean;
  lastReplay: LastReplay | null;
  today: string;
  snippet?: string | null;
  search?: string;
  onPick: (id: number, toggle?: boolean) => void;
}) {
  const failed = lastReplay !== null && replayFailed(lastReplay) ? lastReplay : null;
  return (
    <div
      id={`event-row-${event.id}`}
      role="option"
      aria-selected={isOpen}
      aria-posinset={position}
      aria-setsize={setSize}
      aria-label={`${event.origin === 'provider' ? '' : `${event.origin} `}${event.provider} ${event.event_type ?? 'untyped'} event ${event.id}, ${event.origin === 'import' ? `the file says ${event.trust_mode}, not verified` : event.trust_mode}${failed ? `, last ${failed.requested_by === 'forward' ? 'forward' : 'replay'} failed` : ''}${isSelected ? ', selected' : ''}`}
      className={`event-row${isCursor ? ' cursor' : ''}${isOpen ? ' open' : ''}${isSelected ? ' selected-for-suite' : ''}`}
      style={{ transform: `translateY(${start}px)` }}
      onClick={(click) => onPick(event.id, click.ctrlKey || click.metaKey)}
    >
      <span className="mono time" title={event.received_at}>
        {formatListTime(event.received_at)}
      </span>
      <span className="provider" title={event.provider}>
        {event.provider}
      </span>
      {/* The type gives way (ellipsis, full text in the tooltip); its badges never do. */}
      <span className="type">
        <span className="type-text" title={event.event_type ?? undefined}>
          {event.event_type ?? <span className="muted">—</span>}
        </span>
        <OriginBadge origin={event.origin} />
        <AttemptsMark attempts={event.attempts} />
        {event.drift && <DriftBadge />}
      </span>
      <span className="trust">
        <EventTrustBadge event={event} compact />
      </span>
      <span className="replay">{failed && <ReplayFailedMark replay={failed} />}</span>
      <span className="num mono size">{formatBytes(event.payload_size)}</span>
      <span className="num mono muted id">
        {isSelected && <span className="suite-mark">✓ </span>}#{event.id}
      </span>
      {search !== '' && (
        <span className="snippet-line mono small">{snippet === null ? <span className="muted">matched in the event type</span> : <Marked text={snippet} search={search} />}</span>
      )}
    </div>
  );
});

/** The excerpt with the search's matches marked (ASCII case-insensitively, like the search). */
function Marked({ text, search }: { text: string; search: string }) {
  const lower = (value: string) => value.replace(/[A-Z]+/g, (run) => run.toLowerCase());
  const haystack = lower(text);
  const needle = lower(search);
  const parts: (string | { mark: string })[] = [];
  let from = 0;
  for (let at = haystack.indexOf(needle); needle !== '' && at >= 0; at = haystack.indexOf(needle, at + needle.length)) {
    if (at > from) parts.push(text.slice(from, at));
    parts.push({ mark: text.slice(at, at + needle.length) });
    from = at + needle.length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return <>{parts.map((part, i) => (typeof part === 'string' ? part : <mark key={i}>{part.mark}</mark>))}</>;
}

/** What the server searches for: 3 letters or digits in a row, of the text's escaped bytes (EventStore searchPatterns). */
function searchable(search: string): boolean {
  let escaped = '';
  for (const byte of new TextEncoder().encode(search)) escaped += byte >= 0x80 || byte === 0 ? `\\${byte.toString(8).padStart(3, '0')}` : String.fromCharCode(byte);
  return /[a-z0-9]{3}/i.test(escaped);
}

/** Whether an element is narrower than `px`, followed as it resizes (the detail pane opening, a window resized). */
function useNarrowerThan(ref: RefObject<HTMLElement | null>, px: number): boolean {
  const [narrow, setNarrow] = useState(false);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const check = () => setNarrow(element.getBoundingClientRect().width < px);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref, px]);
  return narrow;
}

/** The list's mark for an event whose last replay or forward failed; never colour alone. */
function ReplayFailedMark({ replay }: { replay: LastReplay }) {
  const what = replay.requested_by === 'forward' ? 'forward' : 'replay';
  const outcome = replay.delivered ? `answered ${replay.response_status}` : 'got no answer';
  return (
    <span className="replay-mark" title={`The last ${what} (${replay.requested_by}, ${replay.created_at}) ${outcome}. Open the event to see it.`}>
      ✕ {replay.delivered ? replay.response_status : 'failed'}
    </span>
  );
}

/** The API's filter names → `switchboard export`'s flags (src/cli/commands/export.ts). */
const CLI_EXPORT_FLAGS: Record<string, string> = { event_type: 'type', event_type_prefix: 'type-prefix', trust_mode: 'trust' };

/**
 * Exports what the filters select (DESIGN §12) as NDJSON, oldest first. In a browser the file
 * is fetched with the control token and saved; the desktop window offers the CLI command.
 */
function ExportButton({ filters }: { filters: EventFilters }) {
  const { client } = useAppData();
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const query: Record<string, string> = { format: 'ndjson', ...Object.fromEntries(Object.entries(filtersToQuery(filters)).map(([key, value]) => [key, String(value)])) };
  if (!client.exportEvents) {
    const flags = Object.entries(query)
      .filter(([key]) => key !== 'format')
      .map(([key, value]) => ` --${CLI_EXPORT_FLAGS[key] ?? key.replaceAll('_', '-')} ${shellQuote(value)}`)
      .join('');
    return <CopyButton label="Copy the export command" idleText="Export (copy command)" text={`switchboard export${flags} -o events.ndjson`} />;
  }
  const exportEvents = client.exportEvents;
  const run = async () => {
    setState({ busy: true });
    try {
      const blob = await exportEvents(query);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `switchboard-${new Date().toISOString().replace(/[:.]/g, '-')}.ndjson`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      setState({ busy: false });
    } catch (error) {
      setState({ busy: false, error: (error as Error).message });
    }
  };
  return (
    <>
      <button type="button" className="quiet-button" disabled={state.busy} onClick={() => void run()} title="Download the events these filters select, as NDJSON">
        {state.busy ? 'Exporting…' : 'Export'}
      </button>
      {state.error && (
        <span role="alert" className="error-banner">
          {state.error}
        </span>
      )}
    </>
  );
}
