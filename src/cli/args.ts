import { InvalidArgumentError } from 'commander';
import { IsoDateSchema, IsoDateTimeSchema } from '../shared/input.js';

/** Argument parsers for commander: a bad value is a usage error (exit 2) naming the flag. */

export function positiveInt(flag: string, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`${flag} must be a whole number from 1 to ${max}`);
    return n;
  };
}

export function eventId(value: string): number {
  const n = Number(value.replace(/^#/, ''));
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('an event id is a positive whole number, e.g. 1042 or #1042');
  return n;
}

/**
 * `--since` / `--until`: an ISO-8601 date or a time with its offset, as the API takes them —
 * refused here with an example, rather than the API's bare "Invalid input".
 */
export function isoTime(flag: string): (value: string) => string {
  return (value) => {
    if (IsoDateSchema.safeParse(value).success || IsoDateTimeSchema.safeParse(value).success) return value;
    // Shaped like a date but outside the time rule (year 0, year 10000 in UTC, seven fractional
    // digits): the instance refuses it with its reason (400, exit 1), as it does over the API.
    if (/^\d{4}-\d{2}-\d{2}(?:$|T)/.test(value)) return value;
    const example = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    throw new InvalidArgumentError(`${flag} takes an ISO-8601 date or time, e.g. ${flag} ${example} (a day) or ${flag} ${example}T09:00:00Z (a time, Z or ±hh:mm)`);
  };
}

/** `--set data.object.amount_total=999` (repeatable): the value as JSON when it parses, else as a string. */
export function collectSet(value: string, previous: Record<string, unknown>): Record<string, unknown> {
  const equals = value.indexOf('=');
  if (equals < 1) throw new InvalidArgumentError(`"${value}" is not path=value (e.g. --set data.object.amount_total=999)`);
  const raw = value.slice(equals + 1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw;
  }
  return { ...previous, [value.slice(0, equals)]: parsed };
}
