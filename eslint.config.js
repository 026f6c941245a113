import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

// The five zones of STYLE.md, enforced: the core and the shared contract never import
// electron (the core must run headless); the renderer and the shared contract never import
// Node built-ins (they run in a sandboxed browser context).
const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'out/', 'release/', 'docs/', 'coverage/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/core/**', 'src/shared/**', 'src/cli/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'the core runs without Electron; inject what you need' }] }],
    },
  },
  {
    files: ['src/renderer/**', 'src/shared/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'electron', message: 'the renderer talks to main only through the preload API' },
            ...nodeBuiltins.map((name) => ({ name, message: 'no Node built-ins in the renderer or the shared contract' })),
          ],
        },
      ],
    },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
