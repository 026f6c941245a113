import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The architecture note of issue 15, checked on the sources: the faces depend on the narrow
// services interface (src/core/services.ts); only the composition roots import the Switchboard
// class, so there is no import circle between it and the faces it mounts (type-only included).

const src = resolve(import.meta.dirname, '../../src');
const COMPOSITION_ROOT = 'core/switchboard.ts';
/** The shells that create and start a switchboard. */
const STARTERS = ['cli/commands/serve.ts', 'main/core-runner.ts', 'main/index.ts', 'main/lifecycle.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(src, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'));
}

describe('the services interface', () => {
  it('only the composition root and the shells that start it import switchboard.ts', () => {
    const importers = sources(src)
      .filter((file) => localImports(file).includes(COMPOSITION_ROOT))
      .map((file) => relative(src, file))
      .sort();
    expect(importers).toEqual([...STARTERS].sort());
  });

  it('services.ts reaches nothing that imports the composition root', () => {
    const seen = new Set<string>();
    const walk = (path: string) => {
      if (seen.has(path)) return;
      seen.add(path);
      for (const next of localImports(join(src, path))) if (next.startsWith('core/') || next.startsWith('shared/')) walk(next);
    };
    walk('core/services.ts');
    expect(seen.has(COMPOSITION_ROOT)).toBe(false);
  });
});
