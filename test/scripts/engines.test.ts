import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * package.json promises Node ≥ 20.18.1 (#26.11): every runtime dependency, and everything they
 * pull in, must accept that Node too, or `npm install` warns EBADENGINE and the CLI may not run.
 * Read from node_modules/*\/package.json, the versions actually installed.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; dependencies: Record<string, string> };

type Version = [number, number, number];

function parse(text: string): Version {
  const [major = 0, minor = 0, patch = 0] = text.replace(/^v/, '').split('.').map((part) => (part === 'x' || part === '*' ? 0 : Number(part)));
  return [major, minor, patch];
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The range forms engines fields use (`>=20`, `>= 16.0.0`, `^20.18.1 || >=22`, `20.x`); anything else fails loudly. */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) => {
    const parts = alternative.trim().replace(/(>=|<=|>|<|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return parts.every((part) => {
      const match = /^(>=|<=|>|<|\^|~)?(\d+(?:\.(?:\d+|x))?(?:\.(?:\d+|x))?|\*)$/.exec(part);
      if (!match) throw new Error(`engines range not understood: ${range}`);
      const [, op, text] = match as unknown as [string, string | undefined, string];
      if (text === '*') return true;
      const bound = parse(text);
      const order = compare(version, bound);
      switch (op) {
        case '>=':
          return order >= 0;
        case '>':
          return order > 0;
        case '<=':
          return order <= 0;
        case '<':
          return order < 0;
        case '^':
          return order >= 0 && version[0] === bound[0];
        case '~':
          return order >= 0 && version[0] === bound[0] && version[1] === bound[1];
        default:
          return text.split('.').length === 3 && !text.includes('x') ? order === 0 : version[0] === bound[0] && (text.split('.').length < 2 || text.split('.')[1] === 'x' || version[1] === bound[1]);
      }
    });
  });
}

/** Node's lookup: node_modules/<name> in `from`, then in each parent directory. */
function packageDir(name: string, from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir || dir === dirname(ROOT)) return null;
  }
}

function runtimeTree(): Map<string, { name: string; version: string; node?: string }> {
  const found = new Map<string, { name: string; version: string; node?: string }>();
  const queue: Array<[string, string, boolean]> = Object.keys(root.dependencies).map((name) => [name, ROOT, false]);
  while (queue.length > 0) {
    const [name, from, optional] = queue.shift()!;
    const dir = packageDir(name, from);
    if (dir === null) {
      if (!optional) throw new Error(`${name} (needed by ${from}) is not installed`);
      continue;
    }
    if (found.has(dir)) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      version: string;
      engines?: { node?: string };
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    found.set(dir, { name, version: manifest.version, ...(manifest.engines?.node ? { node: manifest.engines.node } : {}) });
    for (const dependency of Object.keys(manifest.dependencies ?? {})) queue.push([dependency, dir, false]);
    for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) queue.push([dependency, dir, true]);
  }
  return found;
}

describe('engines (#26.11)', () => {
  it('the range reader reads the forms it meets', () => {
    expect(satisfies([20, 18, 1], '>=20')).toBe(true);
    expect(satisfies([20, 18, 1], '>=22.12.0')).toBe(false);
    expect(satisfies([20, 18, 1], '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies([20, 18, 1], '>= 16.0.0')).toBe(true);
  });

  it('the oldest Node package.json accepts is accepted by every runtime dependency, direct or not', () => {
    const oldest = /^>=\s*(\d+\.\d+\.\d+)$/.exec(root.engines.node)?.[1];
    expect(oldest, 'engines.node is a plain lower bound').toBeDefined();
    const tree = runtimeTree();
    expect(tree.size).toBeGreaterThanOrEqual(Object.keys(root.dependencies).length);
    const excluded = [...tree.values()].filter(({ node }) => node !== undefined && !satisfies(parse(oldest!), node)).map(({ name, version, node }) => `${name}@${version} needs node ${node}`);
    expect(excluded).toEqual([]);
  });

  it('every runtime dependency is pinned to an exact version', () => {
    for (const [name, version] of Object.entries(root.dependencies)) expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
