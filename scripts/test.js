// `npm test`: builds what the end-to-end tests spawn, runs vitest, and ends with one plain
// `N passed, N failed` line (CI does not read vitest's own summary).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildCoreIfStale, buildRendererIfStale } from './build-if-stale.js';

const root = dirname(import.meta.dirname);
buildCoreIfStale();
buildRendererIfStale();

const report = join(root, 'node_modules', '.cache', 'vitest-report.json');
rmSync(report, { force: true });
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);

if (existsSync(report)) {
  const { numPassedTests = 0, numFailedTests = 0, numPendingTests = 0, numTodoTests = 0 } = JSON.parse(readFileSync(report, 'utf8'));
  const failedSuites = JSON.parse(readFileSync(report, 'utf8')).testResults?.filter((file) => file.status === 'failed' && file.assertionResults.length === 0).length ?? 0;
  process.stdout.write(`\n${numPassedTests} passed, ${numFailedTests + failedSuites} failed, ${numPendingTests + numTodoTests} skipped\n`);
} else {
  process.stdout.write('\n0 passed, 1 failed\n');
}
process.exit(result.status ?? 1);
