import { z } from 'zod';

/**
 * The delivery lab (DESIGN §15), shared by config.json, the faces and the renderer: answer rules
 * choose what a provider gets back from the receiver (to watch its retries), a chaos profile
 * shapes what a consumer gets from replays and forward rules (duplicates, reordering, delay).
 */

export const MAX_ANSWER_DELAY_MS = 30_000;
export const ATTEMPT_LOG_KEPT = 50;
/** On an answer a rule decided: the rule's number (a test event's sender knows the event was stored). */
export const ANSWER_RULE_HEADER = 'x-switchboard-answer-rule';

/**
 * An event-type glob: `*` is any run of characters, everything else literal. Brackets and braces
 * are refused rather than taken literally: someone writing `invoice.{paid,failed}` means a set.
 */
export const EventTypeGlobSchema = z
  .string()
  .min(1, 'a glob such as "invoice.*" (empty matches nothing)')
  .max(256)
  .refine((glob) => !/[[\]{}]/.test(glob), 'a glob of literal text and "*" (any run of characters); [ ] { } are not supported');

/** A dot path into the JSON payload: `data.object.livemode`, numeric segments index arrays. */
export const PayloadPathSchema = z
  .string()
  .max(512)
  .regex(/^[^.\s]+(\.[^.\s]+)*$/, 'a dot path such as "data.object.livemode" (no empty segments or spaces)');

const JsonValueSchema: z.ZodType<unknown> = z.unknown();

export const AnswerRuleSchema = z
  .strictObject({
    when: z
      .strictObject({
        event_type: EventTypeGlobSchema.optional(),
        path: PayloadPathSchema.optional(),
        equals: JsonValueSchema.optional(),
      })
      .refine((when) => (when.path === undefined) === (when.equals === undefined), 'path and equals go together')
      .optional(),
    status: z.number().int().min(200, 'an HTTP status from 200 to 599').max(599, 'an HTTP status from 200 to 599'),
    headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name'), z.string().regex(/^[^\r\n\0]*$/, 'no line breaks')).optional(),
    body: z.string().max(65_536).optional(),
    delay_ms: z.number().int().min(0).max(MAX_ANSWER_DELAY_MS, `at most ${MAX_ANSWER_DELAY_MS} ms (30 s)`).default(0),
    first_attempts: z.number().int().positive().optional(),
    probability: z.number().min(0, 'a share from 0 to 1').max(1, 'a share from 0 to 1').optional(),
    seed: z.number().int().optional(),
  });
export type AnswerRule = z.infer<typeof AnswerRuleSchema>;
export type AnswerRuleInput = z.input<typeof AnswerRuleSchema>;

/** `*` any run of characters; the rest literal. */
export function globMatches(glob: string, text: string | null): boolean {
  if (text === null) return false;
  const pattern = glob.split('*').map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`, 's').test(text);
}

export const ChaosProfileSchema = z
  .strictObject({
    duplicate: z
      .strictObject({
        probability: z.number().min(0).max(1).default(1),
        copies: z.number().int().min(1).max(10).default(1),
        after_ms: z.number().int().min(0).max(MAX_ANSWER_DELAY_MS).default(100),
      })
      .optional(),
    reorder_window: z.number().int().min(2).max(100).optional(),
    delay_ms: z
      .strictObject({ min: z.number().int().min(0).max(MAX_ANSWER_DELAY_MS), max: z.number().int().min(0).max(MAX_ANSWER_DELAY_MS) })
      .refine((range) => range.min <= range.max, 'min must not exceed max')
      .optional(),
    seed: z.number().int().optional(),
  })
  .describe('chaos: duplicates, reordering, delay (DESIGN §15)');
export type ChaosProfile = z.infer<typeof ChaosProfileSchema>;
export type ChaosProfileInput = z.input<typeof ChaosProfileSchema>;

export const CHAOS_MARKS = ['duplicate', 'delayed', 'reordered'] as const;
export type ChaosMark = (typeof CHAOS_MARKS)[number];
export const IDEMPOTENCY_VERDICTS = ['idempotent', 'not_idempotent'] as const;
export type IdempotencyVerdict = (typeof IDEMPOTENCY_VERDICTS)[number];

/**
 * `idempotent` when every copy got a 2xx; `not_idempotent` when the first got a 2xx and a later
 * copy did not (the provider would retry, or disable the endpoint); null when nothing was
 * duplicated or the first copy itself failed (then it is not a question of idempotency).
 */
export function idempotencyVerdict(statuses: readonly (number | null)[]): IdempotencyVerdict | null {
  if (statuses.length < 2) return null;
  const ok = (status: number | null) => status !== null && status >= 200 && status < 300;
  if (!ok(statuses[0]!)) return null;
  return statuses.every(ok) ? 'idempotent' : 'not_idempotent';
}

/** mulberry32: a tiny seeded generator, so the same seed gives the same decisions everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A profile in the CLI spelling is a few dozen characters; anything past this is not one. */
export const MAX_CHAOS_SPEC_LENGTH = 500;

/** What someone typed, cut to 40 characters for a one-line message. */
const clipped = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * A piece of what someone typed, safe to put in a one-line message: printable ASCII as it is,
 * anything else (NUL, newlines, a pasted megabyte) quoted with escapes, clipped.
 */
function shownPart(text: string): string {
  const cut = clipped(text);
  return /^[\x21-\x7e]*$/.test(cut) ? cut : JSON.stringify(cut);
}

/**
 * The CLI spelling `duplicate=0.2,copies=1,after=100,reorder=5,delay=0-500,seed=42` as the
 * profile's input (validated by ChaosProfileSchema afterwards). Throws with the bad part named
 * (shortened and escaped: the message is one line whatever was pasted).
 */
export function parseChaosSpec(spec: string): ChaosProfileInput {
  if (spec.length > MAX_CHAOS_SPEC_LENGTH) throw new Error(`--chaos: ${spec.length.toLocaleString('en')} characters is not a profile (at most ${MAX_CHAOS_SPEC_LENGTH}; e.g. duplicate=1,reorder=3,delay=0-200,seed=7)`);
  const profile: ChaosProfileInput = {};
  const duplicate: { probability?: number; copies?: number; after_ms?: number } = {};
  const number = (key: string, value: string, part = `${key}=${value}`) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new Error(`--chaos ${shownPart(part)}: not a number`);
    return parsed;
  };
  for (const part of spec.split(',').map((item) => item.trim()).filter(Boolean)) {
    const equals = part.indexOf('=');
    const [key, value] = equals === -1 ? [part, ''] : [part.slice(0, equals), part.slice(equals + 1)];
    switch (key) {
      case 'duplicate':
        duplicate.probability = number(key, value);
        break;
      case 'copies':
        duplicate.copies = number(key, value);
        break;
      case 'after':
        duplicate.after_ms = number(key, value);
        break;
      case 'reorder':
        profile.reorder_window = number(key, value);
        break;
      case 'delay': {
        const [min, max = min] = value.split('-', 2) as [string, string?];
        profile.delay_ms = { min: number(key, min, part), max: number(key, max, part) };
        break;
      }
      case 'seed':
        profile.seed = number(key, value);
        break;
      default:
        throw new Error(`--chaos: unknown part ${JSON.stringify(clipped(key))} (duplicate, copies, after, reorder, delay, seed)`);
    }
  }
  if (Object.keys(duplicate).length > 0) profile.duplicate = duplicate;
  return profile;
}

/**
 * A profile in the CLI spelling parseChaosSpec reads (what a suite run shows and stores on the
 * wire): `duplicate=1,copies=2,after=100,reorder=5,delay=0-500,seed=42`, parts in that order,
 * a duplicate always with its copies and after, a fixed delay as `delay=N`.
 */
export function formatChaosSpec(profile: ChaosProfile): string {
  const parts: string[] = [];
  if (profile.duplicate) parts.push(`duplicate=${profile.duplicate.probability}`, `copies=${profile.duplicate.copies}`, `after=${profile.duplicate.after_ms}`);
  if (profile.reorder_window !== undefined) parts.push(`reorder=${profile.reorder_window}`);
  if (profile.delay_ms) parts.push(`delay=${profile.delay_ms.min === profile.delay_ms.max ? profile.delay_ms.min : `${profile.delay_ms.min}-${profile.delay_ms.max}`}`);
  if (profile.seed !== undefined) parts.push(`seed=${profile.seed}`);
  return parts.join(',');
}

/** The profile with a seed: its own, or one drawn now (recorded, so the run can be repeated). */
export function chaosWithSeed(profile: ChaosProfile, random: () => number = Math.random): ChaosProfile & { seed: number } {
  return { ...profile, seed: profile.seed ?? Math.floor(random() * 2 ** 31) };
}

/**
 * The CLI spelling, parsed and checked: the profile, or one line saying what is wrong (`label`
 * names the option or field: `--chaos`, `chaos`).
 */
export function chaosFromSpec(spec: string, label = '--chaos'): { profile: ChaosProfile } | { error: string } {
  let input: ChaosProfileInput;
  try {
    input = parseChaosSpec(spec);
  } catch (error) {
    return { error: (error as Error).message.replace('--chaos', label) };
  }
  const parsed = ChaosProfileSchema.safeParse(input);
  if (!parsed.success) return { error: `${label}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'profile'}: ${issue.message}`).join('; ')}` };
  return { profile: parsed.data };
}
