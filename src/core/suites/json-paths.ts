import { JSONPath } from 'jsonpath-plus';
import { SwitchboardError } from '../errors.js';

/**
 * JSONPath for suites (DESIGN §14): how a difference's place in a body is written
 * (`$.data.object.amount`, `$.items[2].sku`), and the `ignore` patterns that take differences
 * out of a comparison (`$.received_at`, `$..id`, `$.items[*].updated_at`).
 *
 * jsonpath-plus parses every pattern. The common forms — names, indexes, `*` for one member and
 * `..` for any depth — are then matched against a difference's path directly, which costs
 * nothing per body; any other form (a union `[0,1]`, a slice `[1:]`) is evaluated by the
 * library on the two bodies. Filter and script expressions (`[?(…)]`, `(…)`) are refused: a
 * pattern can come from a suite file, and the library would run them as code.
 */

/** A difference's place: the member names and array indexes from the root of the body. */
export type JsonPathSegments = readonly (string | number)[];

export const MAX_IGNORES = 200;
export const MAX_PATTERN_CHARS = 500;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Segments the fast matcher does not understand: the library evaluates such a pattern. */
const LIBRARY_ONLY = /[,:?()@`]|^[~^]$/;

/** `$.data.items[2]['odd key']`: dots for names, brackets for indexes and for names that need quoting. */
export function formatJsonPath(segments: JsonPathSegments): string {
  let out = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += `.${segment}`;
    else out += `['${segment}']`;
  }
  return out;
}

/**
 * Whether `formatJsonPath(segments)` reads back as the same path: jsonpath-plus has no escapes,
 * so a member name with a quote or a bracket, or one named `*` or `..`, cannot be written.
 */
export function isWritablePath(segments: JsonPathSegments): boolean {
  return segments.every((segment) => typeof segment === 'number' || (!/['[\]]/.test(segment) && segment !== '*' && segment !== '..' && segment !== ''));
}

/** Why a pattern cannot be used, or null when it can. */
export function ignorePatternProblem(pattern: string): string | null {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_CHARS) return `an ignore pattern is 1 to ${MAX_PATTERN_CHARS} characters`;
  if (!pattern.startsWith('$')) return `${JSON.stringify(pattern)} is not a JSONPath: it starts with $ (e.g. $.received_at, $..id, $.items[*].updated_at)`;
  if (/\?\s*\(|\(/.test(pattern)) return `${JSON.stringify(pattern)}: filter and script expressions are not supported in ignores`;
  try {
    JSONPath.toPathArray(pattern);
    JSONPath({ path: pattern, json: { a: [1] }, resultType: 'pointer', eval: false, wrap: true });
  } catch (error) {
    return `${JSON.stringify(pattern)} is not a JSONPath jsonpath-plus can read: ${(error as Error).message}`;
  }
  return null;
}

/** Checks a list of patterns (a save, an import): every problem is one invalid_argument. */
export function checkIgnorePatterns(patterns: readonly string[], where = 'ignore'): string[] {
  if (patterns.length > MAX_IGNORES) throw new SwitchboardError('invalid_argument', `${where}: at most ${MAX_IGNORES} patterns`);
  const problems = patterns.map((pattern) => ignorePatternProblem(pattern)).filter((problem) => problem !== null);
  if (problems.length > 0) throw new SwitchboardError('invalid_argument', `${where}: ${problems.join('; ')}`);
  return [...new Set(patterns)];
}

interface CompiledPattern {
  pattern: string;
  /** After `$`; null when the library must evaluate it on the bodies. */
  segments: string[] | null;
}

/** The ignore list of one suite, parsed once per run. */
export class IgnoreRules {
  private readonly patterns: CompiledPattern[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map((pattern) => {
      const [, ...segments] = JSONPath.toPathArray(pattern) as string[];
      return { pattern, segments: segments.some((segment) => LIBRARY_ONLY.test(segment)) ? null : segments };
    });
  }

  get size(): number {
    return this.patterns.length;
  }

  /** These rules and more (the paths a run learned). */
  with(patterns: readonly string[]): IgnoreRules {
    return new IgnoreRules([...this.patterns.map((compiled) => compiled.pattern), ...patterns]);
  }

  /**
   * A matcher for differences between these two bodies: a path is ignored when a pattern
   * matches it or one of its ancestors (ignoring `$.meta` ignores everything inside it).
   */
  matcher(expected: unknown, got: unknown): (path: JsonPathSegments) => boolean {
    const fast = this.patterns.filter((compiled) => compiled.segments !== null).map((compiled) => compiled.segments!);
    let evaluated: string[][] | null = null;
    const slow = this.patterns.filter((compiled) => compiled.segments === null);
    const pointers = () =>
      (evaluated ??= slow.flatMap(({ pattern }) =>
        [expected, got].flatMap((json) => (JSONPath({ path: pattern, json: json as object, resultType: 'pointer', eval: false, wrap: true }) as string[]).map(pointerSegments)),
      ));
    return (path) => {
      const text = path.map(String);
      if (fast.some((segments) => matchesPrefix(segments, 0, text, 0))) return true;
      return slow.length > 0 && pointers().some((pointer) => pointer.length <= text.length && pointer.every((segment, i) => segment === text[i]));
    };
  }

  /** Whether one of the patterns already covers this path (learning does not add it twice). */
  covers(path: JsonPathSegments): boolean {
    const text = path.map(String);
    return this.patterns.some((compiled) => compiled.segments !== null && matchesPrefix(compiled.segments, 0, text, 0));
  }
}

/** Does `pattern[p…]` match a prefix of `path[i…]`? `*` is one member, `..` any number (zero too). */
function matchesPrefix(pattern: readonly string[], p: number, path: readonly string[], i: number): boolean {
  if (p === pattern.length) return true;
  const segment = pattern[p]!;
  if (segment === '..') {
    for (let j = i; j <= path.length; j++) if (matchesPrefix(pattern, p + 1, path, j)) return true;
    return false;
  }
  if (i === path.length) return false;
  if (segment !== '*' && segment !== path[i]) return false;
  return matchesPrefix(pattern, p + 1, path, i + 1);
}

/** `/a/0/b~1c` → ['a', '0', 'b/c'] (RFC 6901). */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}
