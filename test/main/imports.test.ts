import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The zones of STYLE.md, checked on the import graph itself (type-only imports included where
// they matter): main wires the core and never reaches into the renderer; the preload is one
// small, self-contained bundle; the core stays free of the shell.

const root = resolve(import.meta.dirname, '../..');
const src = join(root, 'src');

interface Import {
  specifier: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) && clause.name === undefined && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0]!)) {
      found.push({ specifier: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveLocal(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  throw new Error(`${relative(root, from)}: cannot resolve ${specifier}`);
}

/** Every local file reachable from `entry`, with the bare (package) imports met on the way. */
function graph(entry: string, { runtimeOnly }: { runtimeOnly: boolean }) {
  const files = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const { specifier, typeOnly } of importsOf(file)) {
      if (runtimeOnly && typeOnly) continue;
      const local = resolveLocal(file, specifier);
      if (local) walk(local);
      else packages.add(specifier);
    }
  };
  walk(entry);
  return { files: [...files].map((file) => relative(src, file)), packages };
}

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );

describe('the main process', () => {
  const main = graph(join(src, 'main', 'index.ts'), { runtimeOnly: false });

  it('wires the core without importing anything from the renderer', () => {
    expect(main.files.some((file) => file.startsWith('core/'))).toBe(true);
    expect(main.files.filter((file) => file.startsWith('renderer/'))).toEqual([]);
  });

  it('is composed of setupX modules that take Electron as an argument (only index.ts imports it for real)', () => {
    for (const file of tsFiles(join(src, 'main')).filter((file) => !file.endsWith('index.ts'))) {
      const electron = importsOf(file).filter((entry) => entry.specifier === 'electron');
      expect(electron.every((entry) => entry.typeOnly), relative(root, file)).toBe(true);
    }
  });

  it('keeps index.ts a thin composition (well under 150 lines)', () => {
    expect(readFileSync(join(src, 'main', 'index.ts'), 'utf8').split('\n').length).toBeLessThan(150);
  });
});

describe('the preload', () => {
  const preload = graph(join(src, 'preload', 'index.ts'), { runtimeOnly: true });

  it('bundles only itself and the zod-free method list, and requires only electron', () => {
    expect(preload.files.sort()).toEqual(['preload/api.ts', 'preload/index.ts', 'shared/api-methods.ts']);
    expect([...preload.packages]).toEqual(['electron']);
  });

  it('imports nothing from main, the core or the renderer, not even types', () => {
    const all = graph(join(src, 'preload', 'index.ts'), { runtimeOnly: false });
    expect(all.files.filter((file) => /^(main|core|renderer)\//.test(file))).toEqual([]);
  });
});

describe('the core and the shared contract', () => {
  it('never import the shell (main, preload) or the renderer', () => {
    for (const file of [...tsFiles(join(src, 'core')), ...tsFiles(join(src, 'shared'))]) {
      for (const { specifier } of importsOf(file)) {
        const local = resolveLocal(file, specifier);
        if (local) expect(relative(src, local), `${relative(root, file)} imports ${specifier}`).not.toMatch(/^(main|preload|renderer)\//);
        else expect(specifier, relative(root, file)).not.toBe('electron');
      }
    }
  });
});
