import { SwitchboardError } from './errors.js';

/**
 * Dot paths into a JSON value (`--set data.object.amount_total=999`), shared by test events and
 * replays. A path may not walk into the prototype chain: these come from a caller.
 */

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

/** How deep an override's value may nest: far beyond any real payload, far below the stack's limit. */
export const MAX_OVERRIDE_DEPTH = 100;

/**
 * An override's value, checked before anything serializes it: one nested 50,000 arrays deep
 * would overflow the stack in JSON.stringify (an `internal` error) — it is the caller's
 * `invalid_argument`. Walked with an explicit stack, so the check itself cannot overflow.
 */
export function checkOverrideValue(path: string, value: unknown): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_OVERRIDE_DEPTH) {
      throw new SwitchboardError('invalid_argument', `override "${path}": the value nests deeper than ${MAX_OVERRIDE_DEPTH} levels of arrays and objects`);
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) stack.push([child, depth + 1]);
  }
}

/** `data.object.amount_total` = value; numeric segments index arrays; missing objects are created. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  checkOverrideValue(path, value);
  const segments = path.split('.');
  if (segments.some((segment) => segment === '')) throw new SwitchboardError('invalid_argument', `override path "${path}" has an empty segment`);
  const forbidden = segments.find((segment) => FORBIDDEN_SEGMENTS.has(segment));
  if (forbidden) throw new SwitchboardError('invalid_argument', `override path "${path}" may not name "${forbidden}"`);
  let current: unknown = target;
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    const container = current as Record<string, unknown> | unknown[];
    if (Array.isArray(container)) {
      const position = Number(segment);
      if (!Number.isInteger(position) || position < 0 || position > container.length) {
        throw new SwitchboardError('invalid_argument', `override path "${path}": "${segment}" is not an index of an array of ${container.length}`);
      }
      if (last) container[position] = value;
      else {
        if (container[position] === null || typeof container[position] !== 'object') container[position] = {};
        current = container[position];
      }
      return;
    }
    if (last) container[segment] = value;
    else {
      const next = container[segment];
      if (next === null || typeof next !== 'object') container[segment] = {};
      current = container[segment];
    }
  });
}
