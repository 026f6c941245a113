import type { ConfigProblem } from '../shared/api.js';
import { ConfigSchema, formatPath } from './config.js';

/**
 * Why a hand edit of config.json was refused, in a form the UI can point at (issue #26.7): the
 * JSON path and the line:column in the file — for a syntax error (a comment, a trailing comma, a
 * cut-off file) where the text stops being JSON, for a wrong value where that value starts —
 * rather than JSON.parse's "position 2217". A small scanner of its own, because JSON.parse
 * gives neither the path nor, on Node 20, always the position.
 */

export function locateConfigProblem(file: string, text: string | null, reason: string): ConfigProblem {
  if (text === null) return { file, message: reason, path: null, line: null, column: null };
  const scan = scanJson(text);
  if (scan.error) {
    const { line, column } = lineColumn(text, scan.error.offset);
    return { file, message: `${scan.error.message}: config.json is plain JSON`, path: formatPath(scan.error.path), line, column };
  }
  const parsed = ConfigSchema.safeParse(JSON.parse(text));
  const issue = parsed.success ? undefined : parsed.error.issues[0];
  if (!issue) return { file, message: reason, path: null, line: null, column: null };
  // The deepest part of the path the file has (an unknown key's parent, a missing field's object).
  let path = issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part));
  while (path.length > 0 && !scan.offsets.has(key(path))) path = path.slice(0, -1);
  const { line, column } = lineColumn(text, scan.offsets.get(key(path)) ?? 0);
  return { file, message: issue.message, path: formatPath(issue.path), line, column };
}

const key = (path: readonly (string | number)[]) => JSON.stringify(path);

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

interface Scan {
  /** Where each value starts, by its path (JSON-encoded). */
  offsets: Map<string, number>;
  error?: { offset: number; path: (string | number)[]; message: string };
}

class JsonSyntaxError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** Walks the text as JSON, noting where every value starts; stops at the first syntax error. */
export function scanJson(text: string): Scan {
  const offsets = new Map<string, number>();
  let i = 0;
  const path: (string | number)[] = [];
  const fail = (message: string, at = i): never => {
    throw new JsonSyntaxError(at, message);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
    if (text.startsWith('//', i) || text.startsWith('/*', i)) fail('a comment');
  };
  const unexpected = (expected: string): never => {
    if (i >= text.length) fail(`the file ends early (expected ${expected}); it looks cut off`);
    return fail(`unexpected ${JSON.stringify(text[i])} (expected ${expected})`);
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text.charCodeAt(i) < 0x20) fail('a control character inside a string');
      i++;
    }
    if (i >= text.length) fail('the file ends inside a string; it looks cut off', start);
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('a bad escape in a string', start);
    }
  };
  const value = (): void => {
    space();
    offsets.set(key(path), i);
    const ch = text[i];
    if (ch === '{') {
      i++;
      space();
      if (text[i] === '}') return void i++;
      for (;;) {
        space();
        if (text[i] !== '"') unexpected(text[i] === '}' ? 'another key — a trailing comma is not allowed' : 'a "quoted" key');
        const name = string();
        space();
        if (text[i] !== ':') unexpected('":"');
        i++;
        path.push(name);
        value();
        path.pop();
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return void i++;
        unexpected('"," or "}"');
      }
    }
    if (ch === '[') {
      i++;
      space();
      if (text[i] === ']') return void i++;
      for (let index = 0; ; index++) {
        path.push(index);
        space();
        if (text[i] === ']') unexpected('another value — a trailing comma is not allowed');
        value();
        path.pop();
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return void i++;
        unexpected('"," or "]"');
      }
    }
    if (ch === '"') return void string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
    if (!literal) unexpected('a value');
    i += literal![0].length;
  };
  try {
    space();
    if (i >= text.length) fail('the file is empty: write {} for no settings');
    value();
    space();
    if (i < text.length) fail('more text after the end of the JSON');
    return { offsets };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { offsets, error: { offset: error.offset, path: [...path], message: error.message } };
  }
}
