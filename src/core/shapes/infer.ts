import { isSecretHeader } from '../redact.js';

/**
 * The inferred shape of one (provider, event_type) (DESIGN §16): every field path seen in its
 * JSON payloads, the JSON types seen there, how often, and one masked example. Payloads come
 * from outside, so everything here is bounded whatever they hold: at most MAX_SHAPE_PATHS paths
 * per type (then `truncated`), nothing walked below MAX_SHAPE_DEPTH (deeper values are summarised
 * by their type), keys in paths escaped (dots, brackets, NUL, `__proto__`), and fields kept in a
 * Map — a key never becomes a property of one of our objects.
 */

export const MAX_SHAPE_PATHS = 2_000;
export const MAX_SHAPE_DEPTH = 16;
export const MAX_EXAMPLE_CHARS = 80;
/** A key longer than this is cut in its path (two such keys may then share a path). */
const MAX_KEY_CHARS = 200;
/** Drift is marked once a type has this many events. */
export const DRIFT_MIN_EVENTS = 20;
/** A path present in at least this share of the earlier events is expected: an event without it drifts. */
export const DRIFT_MISSING_PRESENCE = 0.99;

export const JSON_TYPES = ['object', 'array', 'string', 'number', 'boolean', 'null'] as const;
export type JsonType = (typeof JSON_TYPES)[number];

export interface FieldStats {
  path: string;
  /** The path of the object or array holding it ('' for the payload's top level; null for the root). */
  parent: string | null;
  /** Its member name, or null for an array's items and the root. */
  key: string | null;
  /** How many values of each type were seen here. */
  types: Partial<Record<JsonType, number>>;
  /** Events that had this path. */
  events: number;
  /** Times a parent object had this member (array items: every item). */
  occurrences: number;
  /** Values here that were objects: the parents of its members. */
  objects: number;
  first_seen: string;
  last_seen: string;
  example?: string;
  /** Objects or arrays here were not walked further (MAX_SHAPE_DEPTH). */
  deep?: boolean;
}

export interface Shape {
  events_seen: number;
  first_seen: string | null;
  last_seen: string | null;
  truncated: boolean;
  fields: Map<string, FieldStats>;
}

export interface DriftMark {
  path: string;
  change: 'added' | 'missing' | 'type_changed';
  was?: string;
  now?: string;
}

export const emptyShape = (): Shape => ({ events_seen: 0, first_seen: null, last_seen: null, truncated: false, fields: new Map() });

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `parent.key`, or `parent["odd key"]` (JSON-quoted) for keys a dot path cannot spell. */
export function childPath(parent: string, key: string): string {
  if (IDENTIFIER.test(key) && key !== '__proto__') return parent === '' ? key : `${parent}.${key}`;
  const cut = key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
  return `${parent}[${JSON.stringify(cut)}]`;
}

export const itemsPath = (parent: string) => `${parent}[]`;

export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' ? type : 'object';
}

/** An example value as text, cut to MAX_EXAMPLE_CHARS; secret-looking member names are masked. */
function exampleOf(value: unknown, key: string | null): string {
  if (key !== null && isSecretHeader(key)) return '«redacted»';
  const text = typeof value === 'string' ? JSON.stringify(value.length > MAX_EXAMPLE_CHARS ? value.slice(0, MAX_EXAMPLE_CHARS) : value) : String(value);
  return text.length > MAX_EXAMPLE_CHARS ? `${text.slice(0, MAX_EXAMPLE_CHARS - 1)}…` : text;
}

interface Seen {
  types: Set<JsonType>;
  parent: string | null;
  key: string | null;
}

/**
 * The paths of one payload and the types at each — walked iteratively (a payload nested 10,000
 * deep costs no stack), no further than MAX_SHAPE_DEPTH, and calling `visit` for every value.
 */
function walk(root: unknown, visit: (path: string, value: unknown, type: JsonType, parent: string | null, key: string | null, walked: boolean) => boolean): void {
  const stack: { value: unknown; path: string; parent: string | null; key: string | null; depth: number }[] = [
    { value: root, path: '', parent: null, key: null, depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, path, parent, key, depth } = stack.pop()!;
    const type = jsonType(value);
    const deeper = depth < MAX_SHAPE_DEPTH;
    if (!visit(path, value, type, parent, key, deeper)) continue;
    if (!deeper) continue;
    if (type === 'object') {
      for (const member of Object.keys(value as object)) {
        stack.push({ value: (value as Record<string, unknown>)[member], path: childPath(path, member), parent: path, key: member, depth: depth + 1 });
      }
    } else if (type === 'array') {
      for (const item of value as unknown[]) stack.push({ value: item, path: itemsPath(path), parent: path, key: null, depth: depth + 1 });
    }
  }
}

/**
 * Adds one event's payload to `shape` and answers how the event drifts from the shape as it was
 * before (empty below DRIFT_MIN_EVENTS events).
 */
export function observe(shape: Shape, payload: unknown, receivedAt: string): DriftMark[] {
  const seen = new Map<string, Seen>();
  const judged = shape.events_seen >= DRIFT_MIN_EVENTS;
  const drift: DriftMark[] = [];
  walk(payload, (path, value, type, parent, key, walked) => {
    let field = shape.fields.get(path);
    if (!field) {
      if (shape.fields.size >= MAX_SHAPE_PATHS) {
        shape.truncated = true;
        return false; // not tracked, and nothing below it is either
      }
      field = { path, parent, key, types: {}, events: 0, occurrences: 0, objects: 0, first_seen: receivedAt, last_seen: receivedAt };
      shape.fields.set(path, field);
      if (judged) drift.push({ path: path || '$', change: 'added', now: type });
    } else if (judged && !field.types[type] && !seen.get(path)?.types.has(type) && field.events > 0) {
      drift.push({ path: path || '$', change: 'type_changed', was: typeList(field), now: type });
    }
    let mine = seen.get(path);
    if (!mine) {
      mine = { types: new Set(), parent, key };
      seen.set(path, mine);
    }
    mine.types.add(type);
    field.types[type] = (field.types[type] ?? 0) + 1;
    field.occurrences++;
    if (type === 'object') field.objects++;
    if (!walked && (type === 'object' || type === 'array')) field.deep = true;
    if (field.example === undefined && type !== 'object' && type !== 'array') field.example = exampleOf(value, key);
    return true;
  });
  if (judged) {
    // Expected paths this event lacks — only where their parent is here (a missing object is one mark, not one per member).
    for (const field of shape.fields.values()) {
      if (field.parent === null || seen.has(field.path)) continue;
      if (field.events / shape.events_seen < DRIFT_MISSING_PRESENCE) continue;
      const parent = seen.get(field.parent);
      if (!parent) continue;
      if (field.key !== null && !parent.types.has('object')) continue;
      if (field.key === null) continue; // an array without items lacks nothing
      drift.push({ path: field.path, change: 'missing', was: typeList(field) });
    }
  }
  for (const [path] of seen) {
    const field = shape.fields.get(path)!;
    field.events++;
    field.last_seen = receivedAt;
  }
  shape.events_seen++;
  shape.first_seen ??= receivedAt;
  shape.last_seen = receivedAt;
  return drift;
}

/** The types seen at a field, most frequent first, as `string | null`. */
export function typeList(field: Pick<FieldStats, 'types'>): string {
  return typesOf(field).join(' | ');
}

export function typesOf(field: Pick<FieldStats, 'types'>): JsonType[] {
  return JSON_TYPES.filter((type) => (field.types[type] ?? 0) > 0).sort((a, b) => (field.types[b] ?? 0) - (field.types[a] ?? 0));
}

/** A shape as the database keeps it (shapes.fields, jsonb): a list, never an object keyed by path. */
export function fieldsToJson(shape: Shape): FieldStats[] {
  return [...shape.fields.values()];
}

export function shapeFromJson(row: { events_seen: number; first_seen: string | null; last_seen: string | null; truncated: boolean; fields: FieldStats[] }): Shape {
  const fields = new Map<string, FieldStats>();
  for (const field of row.fields) fields.set(field.path, field);
  return { events_seen: row.events_seen, first_seen: row.first_seen, last_seen: row.last_seen, truncated: row.truncated, fields };
}
