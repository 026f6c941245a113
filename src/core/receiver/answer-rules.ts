import { isDeepStrictEqual } from 'node:util';
import { globMatches, seededRandom, type AnswerRule } from '../../shared/delivery-lab.js';

/**
 * Answer rules (DESIGN §15): which answer a provider gets for a delivery that verified and was
 * stored. The first matching rule wins. A rule's `probability` draws from a generator seeded by
 * its `seed` and advanced once per eligible delivery, so the same seed and the same deliveries
 * give the same decisions; editing a provider's rules starts the draws over.
 */

export interface AnswerDecision {
  rule: AnswerRule;
  /** The rule's number, from 1 (as the UI and the terminal show it). */
  number: number;
}

export interface RuleInput {
  eventType: string | null;
  payload: Uint8Array;
  /** 1 for the first delivery of an identity, then 2, 3, … for redeliveries. */
  attempt: number;
}

const UNPARSED = Symbol('unparsed');
const BACKSLASH = 0x5c;

/**
 * A path rule's value as the bytes it must appear as in a payload without escapes (a string,
 * true, false, null), or null when it has no single spelling (numbers: 1, 1.0, 1e0). Per rule
 * object: a reload makes new ones.
 */
const spellings = new WeakMap<object, Buffer | null>();
function spellingOf(when: object, equals: unknown): Buffer | null {
  let spelling = spellings.get(when);
  if (spelling === undefined) {
    const text = typeof equals === 'string' || typeof equals === 'boolean' || equals === null ? JSON.stringify(equals) : null;
    spelling = text === null || text.includes('\\') ? null : Buffer.from(text, 'utf8');
    spellings.set(when, spelling);
  }
  return spelling;
}

export class AnswerRules {
  /** Per provider: the rules the draws belong to (a reload gives new objects) and each rule's generator. */
  private readonly draws = new Map<string, { rules: readonly AnswerRule[]; random: Map<number, () => number> }>();

  decide(provider: string, rules: readonly AnswerRule[] | undefined, input: RuleInput): AnswerDecision | null {
    if (!rules || rules.length === 0) return null;
    let json: unknown = UNPARSED;
    let bytes: Buffer | undefined;
    let escapes: boolean | undefined;
    // Parsing a 6 KB payload costs ~28 µs a delivery; looking for the value's bytes ~1 µs. In a
    // payload with no backslash every string is spelled as it is, so a value whose spelling is
    // not in the bytes is not at the path either (and the rule does not match) — sound, not a guess.
    const absent = (when: object, equals: unknown) => {
      const spelling = spellingOf(when, equals);
      if (spelling === null) return false;
      bytes ??= Buffer.from(input.payload.buffer, input.payload.byteOffset, input.payload.byteLength);
      escapes ??= bytes.includes(BACKSLASH);
      return !escapes && !bytes.includes(spelling);
    };
    const payload = () => {
      if (json === UNPARSED) {
        try {
          json = JSON.parse(Buffer.from(input.payload).toString('utf8'));
        } catch {
          json = undefined;
        }
      }
      return json;
    };
    for (const [index, rule] of rules.entries()) {
      const when = rule.when;
      if (when?.event_type !== undefined && !globMatches(when.event_type, input.eventType)) continue;
      if (when?.path !== undefined && (absent(when, when.equals) || !isDeepStrictEqual(valueAt(payload(), when.path), when.equals))) continue;
      if (rule.first_attempts !== undefined && input.attempt > rule.first_attempts) continue;
      if (rule.probability !== undefined && this.draw(provider, rules, index, rule) >= rule.probability) continue;
      return { rule, number: index + 1 };
    }
    return null;
  }

  private draw(provider: string, rules: readonly AnswerRule[], index: number, rule: AnswerRule): number {
    let state = this.draws.get(provider);
    if (!state || state.rules !== rules) {
      state = { rules, random: new Map() };
      this.draws.set(provider, state);
    }
    let random = state.random.get(index);
    if (!random) {
      random = rule.seed === undefined ? Math.random : seededRandom(rule.seed);
      state.random.set(index, random);
    }
    return random();
  }
}

/** The value at a dot path (numeric segments index arrays), or undefined. Own properties only. */
export function valueAt(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      const position = Number(segment);
      current = Number.isInteger(position) ? current[position] : undefined;
    } else {
      current = Object.hasOwn(current, segment) ? (current as Record<string, unknown>)[segment] : undefined;
    }
  }
  return current;
}
