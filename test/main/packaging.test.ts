import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The packaging config as electron-builder itself reads and validates it (its own loader and
// JSON schema), since the packages can only be built where Electron can be downloaded.

const root = resolve(import.meta.dirname, '../..');
const require = createRequire(join(root, 'package.json'));

interface BuilderConfig {
  electronFuses?: Record<string, boolean>;
  /** Normalized by electron-builder's loader into `{ filter }` groups. */
  files?: (string | { filter?: string[] })[];
  asar?: boolean;
  linux?: { target?: string[] };
  mac?: { target?: string };
  win?: { target?: string };
}

async function builderConfig(): Promise<BuilderConfig> {
  const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config') as {
    getConfig: (projectDir: string, configPath: string | null, fromOptions: null) => Promise<BuilderConfig>;
    validateConfiguration: (config: BuilderConfig, logger: unknown) => Promise<void>;
  };
  const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
  const config = await getConfig(root, null, null);
  await validateConfiguration(config, new DebugLogger(false));
  return config;
}

describe('electron-builder config', () => {
  it('sets the Electron fuses that close the runtime’s side doors', async () => {
    const { electronFuses } = await builderConfig();
    expect(electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('builds AppImage and deb, dmg, and nsis, from an asar holding what the app reads at run time', async () => {
    const config = await builderConfig();
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.mac?.target).toBe('dmg');
    expect(config.win?.target).toBe('nsis');
    expect(config.asar).toBe(true);
    // PGlite reads its .wasm/.data beside its module, from a worker thread: real files, not asar.
    expect((config as { asarUnpack?: string[] }).asarUnpack).toContain('node_modules/@electric-sql/pglite/**');
    // out/ (main, preload, renderer), the SQL migrations the core runs, the tray icons.
    const patterns = (config.files ?? []).flatMap((entry) => (typeof entry === 'string' ? [entry] : (entry.filter ?? [])));
    expect(patterns).toEqual(expect.arrayContaining(['out/**', 'migrations/**', 'resources/**', 'package.json']));
  });

  it('points the app at the built main process', () => {
    const manifest = require('./package.json') as { main: string; scripts: Record<string, string> };
    expect(manifest.main).toBe('out/main/index.js');
    expect(manifest.scripts.package).toMatch(/electron-builder/);
  });
});

describe('the Electronegativity wrapper', () => {
  const scan = (...args: string[]) => spawnSync(process.execPath, [join(root, 'scripts', 'electronegativity.js'), ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  const fixture = join(root, 'test', 'main', 'fixtures', 'insecure-window');

  it('fails the run on a HIGH finding (a window with contextIsolation off)', () => {
    const result = scan('--input', fixture, '--allowlist', join(root, 'scripts', 'electronegativity-allowlist.json'));
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toMatch(/HIGH\s+CONTEXT_ISOLATION_JS_CHECK main\.js:5/);
    expect(result.stdout).toContain('problem(s)');
  }, 120_000);

  it('passes when each HIGH finding is justified in the allowlist', () => {
    const result = scan('--input', fixture, '--allowlist', join(root, 'test', 'main', 'fixtures', 'insecure-window-allowlist.json'));
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('HIGH (allowed) CONTEXT_ISOLATION_JS_CHECK');
  }, 120_000);

  it('refuses an allowlist entry without a justification', () => {
    const result = scan('--input', fixture, '--allowlist', join(root, 'test', 'main', 'fixtures', 'unjustified-allowlist.json'));
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('allow[0].justification must be a non-empty string');
  });
});
