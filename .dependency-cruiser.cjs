// The house rules (STYLE.md, DESIGN §1), checked by `npm run lint` with dependency-cruiser: no import
// circle anywhere in src/, the five zones, and the faces reaching the core through services.ts.
// A folder pair importing each other is checked by scripts/check-structure.js (folder-level circles).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle makes modules impossible to read or test one at a time.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'shared-is-only-contracts',
      comment: 'src/shared holds the contracts both sides use (zod schemas, types): it depends on nothing of ours.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/(core|main|preload|renderer|cli)/' },
    },
    {
      name: 'renderer-talks-through-the-contract',
      comment: 'The renderer reaches the core only through the API contract (IPC or HTTP), never by import.',
      severity: 'error',
      from: { path: '^src/renderer/' },
      to: { path: '^src/(core|main|preload|cli)/' },
    },
    {
      name: 'preload-is-narrow',
      severity: 'error',
      from: { path: '^src/preload/' },
      to: { path: '^src/(core|main|renderer|cli)/' },
    },
    {
      name: 'core-knows-no-face',
      comment: 'The core could ship alone (STYLE.md 2): it never imports the shell, the CLI or the renderer.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(main|preload|renderer|cli)/' },
    },
    {
      name: 'electron-only-in-the-shell',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main|preload)/' },
      to: { path: '^electron$|node_modules/electron/' },
    },
    {
      name: 'no-node-in-the-browser',
      comment: 'The renderer and the shared contract run in a sandboxed browser context.',
      severity: 'error',
      from: { path: '^src/(renderer|shared)/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'faces-reach-the-core-through-services',
      comment:
        'The faces (UI API, MCP, CLI, Electron shell) run the core only through the narrow Services interface ' +
        '(src/core/services.ts) and the shared contracts. They may name the types of what Services hands them, and use the ' +
        'leaf modules that define what crosses it (errors, logger, config, record types and their wire form, cursors, the replay request, the ' +
        'HTTP body reader, the control transport they are mounted on, the rate limiter); never a part of the core behind ' +
        'Services at run time, nor the composition root (only the two launchers start it).',
      severity: 'error',
      from: { path: '^src/(core/api|core/mcp|cli|main)/' },
      to: {
        path: '^src/core/',
        dependencyTypesNot: ['type-only'],
        pathNot: [
          '^src/core/(api|mcp|control|export)/',
          '^src/core/(services|errors|logger|config|wire|new-event|paths|private-files|startup-phase|net|http-body|rate-limit)\\.ts$',
          '^src/core/store/(types|cursor)\\.ts$',
          // What a face hands the replay engine: the one input → replay-request mapping, and a provider's forward targets.
          '^src/core/replay/(replay-input|forward-targets)\\.ts$',
          // The standalone suite run and its file formats (checked by the rule below: the suite command alone).
          '^src/core/suites/(standalone|suite-file|junit)\\.ts$',
          '^src/core/switchboard\\.ts$',
        ],
      },
    },
    {
      name: 'faces-reach-the-core-through-services',
      comment: '(the standalone suite run, DESIGN §14: `suite run --file` runs a suite file with no instance, as `serve` starts one)',
      severity: 'error',
      from: { path: '^src/cli/', pathNot: '^src/cli/commands/suite\\.ts$' },
      to: { path: '^src/core/suites/' },
    },
    {
      name: 'only-launchers-start-the-core',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli/commands/serve|main/core-runner|main/lifecycle|main/index|core/switchboard)\\.ts$' },
      to: { path: '^src/core/switchboard\\.ts$' },
    },
    {
      name: 'faces-do-not-import-each-other',
      severity: 'error',
      from: { path: '^src/core/(api|mcp)/' },
      to: { path: '^src/(core/(api|mcp)|cli|main)/', pathNot: '^src/core/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/|^electron$|node_modules/electron/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.node.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js'] },
  },
};
