import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import type { ApiOutput } from '../../shared/api.js';
import { chaosFromSpec, type ChaosProfile } from '../../shared/delivery-lab.js';
import { chaosMarks, SUITE_MAX_CASES, SUITE_MAX_CONCURRENCY, type CaseResult, type Difference, type Verdict } from '../../shared/suites.js';
import { isSwitchboardError } from '../../core/errors.js';
import { switchboardVersion } from '../../core/paths.js';
import { describeDifference, junitXml, type JunitCase } from '../../core/suites/junit.js';
import { runSuiteFile } from '../../core/suites/standalone.js';
import { SuiteFileError } from '../../core/suites/suite-file.js';
import { positiveInt } from '../args.js';
import { connect, withClientOptions, type ClientFlags, type ControlClient } from '../client.js';
import { CliError, EXIT_FAILED, usageError } from '../exit.js';
import { filtersOf, withFilterOptions, type FilterFlags } from '../filters.js';
import { localTime, table } from '../format.js';
import { terminalSafe } from '../terminal-safe.js';

/**
 * `switchboard suite …` (DESIGN §14): suites of captured events, run against the developer's
 * handler. Every verb but one talks to the running instance through the control API; `suite run
 * --file FILE --to URL` needs no instance and no database — it is the CI gate (src/core/suites/
 * standalone.ts). Exit codes: 0 every case pass or new; 1 any changed or failed, or no such
 * suite; 2 usage, no running instance, or a malformed suite file (its line named).
 *
 * Event types, differences and reasons come from senders and handlers: their control
 * characters are printed escaped (`\x1b`), never as themselves, except with --json.
 */

export function suiteCommand(): Command {
  const suite = new Command('suite').description('regression suites of captured events: run them against your handler, in the app or in CI');
  suite.addCommand(listCommand()).addCommand(showCommand()).addCommand(createCommand()).addCommand(runCommand()).addCommand(exportCommand()).addCommand(importCommand()).addCommand(deleteCommand());
  return suite;
}

function listCommand(): Command {
  return withClientOptions(new Command('list').description('the suites, with their last run').option('--json', 'print the suites as JSON')).action(async (flags: ClientFlags & { json?: boolean }) => {
    const { suites } = await (await connect(flags)).call('listSuites', {});
    if (flags.json) return void process.stdout.write(`${JSON.stringify(suites, null, 2)}\n`);
    if (suites.length === 0) return void process.stdout.write('no suites yet: switchboard suite create NAME [filters] (or "Save as suite…" on the Events screen)\n');
    process.stdout.write(
      table(
        ['SUITE', 'CASES', 'LAST RUN', 'PASS', 'CHANGED', 'FAILED', 'NEW'],
        suites.map((entry) => {
          const last = entry.last_run;
          return [entry.name, String(entry.cases), last ? `#${last.id} ${localTime(last.started_at)} ${last.status}` : '-', ...(last ? [last.pass, last.changed, last.failed, last.new].map(String) : ['', '', '', ''])];
        }),
      ),
    );
  });
}

function showCommand(): Command {
  return withClientOptions(new Command('show').description('one suite: its cases, ignores and latest runs').argument('<name>', 'suite name').option('--json', 'print {suite, cases, runs} as JSON')).action(
    async (name: string, flags: ClientFlags & { json?: boolean }) => {
      const client = await connect(flags);
      const detail = await client.call('getSuite', { name });
      const { runs } = await client.call('listSuiteRuns', { name });
      if (flags.json) return void process.stdout.write(`${JSON.stringify({ ...detail, runs }, null, 2)}\n`);
      const { suite, cases } = detail;
      const lines = [
        `suite ${suite.name}: ${suite.cases} case${suite.cases === 1 ? '' : 's'}, ${suite.expectations} with an expectation`,
        `  ignore           ${suite.ignore.length > 0 ? printable(suite.ignore.join('  ')) : '-'}`,
        `  compare headers  ${suite.compare_headers.length > 0 ? suite.compare_headers.join(', ') : '-'}`,
        '',
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      process.stdout.write(table(['CASE', 'PROVIDER', 'TYPE', 'FROM EVENT', 'EXPECTS'], cases.map((c) => [`#${c.case}`, c.provider, printable(c.event_type ?? '-'), c.source_event_id ? `#${c.source_event_id}` : '-', c.expected_status === null ? 'new' : String(c.expected_status)])));
      if (runs.length > 0) {
        process.stdout.write('\n');
        process.stdout.write(table(['RUN', 'STARTED', 'TARGET', 'STATUS', 'PASS', 'CHANGED', 'FAILED', 'NEW'], runs.map((run) => [`#${run.id}${run.accepted ? ' accepted' : ''}`, localTime(run.started_at), run.target_url, run.status, ...[run.pass, run.changed, run.failed, run.new].map(String)])));
      }
    },
  );
}

interface CreateFlags extends ClientFlags, FilterFlags {
  since?: string;
  until?: string;
  limit?: number;
  ids?: number[];
  ignore: string[];
  compareHeader: string[];
  replace?: boolean;
}

function createCommand(): Command {
  return withClientOptions(
    withFilterOptions(
      new Command('create')
        .description(`save a suite from stored events: the list filters (oldest first, 50 unless --limit) or --ids`)
        .argument('<name>', 'suite name: lowercase letters, digits, ".", "-" or "_"'),
    )
      .option('--since <time>', 'received at or after (ISO-8601 date or time)')
      .option('--until <time>', 'received before (ISO-8601 date or time)')
      .option('--limit <n>', `at most this many events (1–${SUITE_MAX_CASES}, default 50)`, positiveInt('--limit', SUITE_MAX_CASES))
      .option('--ids <ids>', 'these events, in this order: 1042,1043,1050', eventIds)
      .option('--ignore <jsonpath>', 'a JSONPath whose value is not compared, e.g. $.received_at (repeatable)', collect, [])
      .option('--compare-header <name>', 'a response header to compare (repeatable)', collect, [])
      .option('--replace', 'replace the cases of an existing suite (its expectations are dropped)'),
  ).action(async (name: string, flags: CreateFlags) => {
    const client = await connect(flags);
    if (!flags.replace) {
      const existing = await client.call('listSuites', {});
      if (existing.suites.some((entry) => entry.name === name)) throw usageError(`a suite named "${name}" exists`, 'pass --replace to replace its cases (its expectations are dropped), or pick another name');
    }
    const filter = { ...filtersOf(flags), ...(flags.since ? { since: flags.since } : {}), ...(flags.until ? { until: flags.until } : {}), ...(flags.limit ? { limit: flags.limit } : {}) };
    if (flags.ids && Object.keys(filter).length > 0) throw usageError('--ids and filters do not mix: give one or the other');
    const { suite, created } = await client.call('saveSuite', {
      name,
      ...(flags.ids ? { event_ids: flags.ids } : { filter }),
      ...(flags.ignore.length > 0 ? { ignore: flags.ignore } : {}),
      ...(flags.compareHeader.length > 0 ? { compare_headers: flags.compareHeader } : {}),
    });
    process.stdout.write(`${created ? 'saved' : 'replaced the cases of'} suite ${suite.name}: ${suite.cases} case${suite.cases === 1 ? '' : 's'}; run it with: switchboard suite run ${suite.name} --to http://localhost:3000/webhooks\n`);
  });
}

interface RunFlags extends ClientFlags {
  to?: string;
  file?: string;
  config?: string;
  concurrency: number;
  accept?: boolean;
  chaos?: ChaosProfile;
  junit?: string;
  json?: boolean;
}

/** `--chaos duplicate=1,copies=2,after=100,reorder=5,delay=0-500,seed=42` (DESIGN §15): a bad spec is a usage error (exit 2). */
function chaosOption(value: string): ChaosProfile {
  const parsed = chaosFromSpec(value);
  if ('error' in parsed) throw new InvalidArgumentError(parsed.error);
  return parsed.profile;
}

/** What both kinds of run print and write. */
interface RunReport {
  suite: string;
  target_url: string;
  started_at: string;
  duration_ms: number;
  /** The chaos profile as run, seed included (CLI spelling); null without one. */
  chaos: string | null;
  counts: Record<Verdict, number>;
  learned_ignores: string[];
  cases: (Pick<CaseResult, 'case' | 'provider' | 'event_type' | 'verdict' | 'status' | 'expected_status' | 'ms' | 'diff_truncated' | 'reason' | 'warning' | 'idempotency' | 'chaos'> & { diff: Difference[] })[];
}

function runCommand(): Command {
  return withClientOptions(
    new Command('run')
      .description('run a suite against your handler: a saved one by NAME, or a suite file with --file (no running instance needed)')
      .argument('[name]', 'a saved suite (not with --file)')
      .option('--to <url>', 'the handler, e.g. http://localhost:3000/webhooks (default: the suite’s last target, else replay.default_target)')
      .option('--file <file>', 'run this suite file, without a running switchboard (CI)')
      .option('--config <file>', 'with --file: a config.json whose providers hold the secrets to re-sign with ({"env": …} sources work)')
      .option('--concurrency <n>', `cases in flight at once (1–${SUITE_MAX_CONCURRENCY}; default 1: one at a time, in order)`, positiveInt('--concurrency', SUITE_MAX_CONCURRENCY), 1)
      .option('--accept', 'this run becomes the expectation (every case is sent twice to learn noise); with --file it is written into the file')
      .option('--chaos <spec>', 'reorder, delay and duplicate the cases, e.g. duplicate=1,copies=2,after=100,reorder=5,delay=0-500,seed=42 (a duplicate a 2xx handler does not take again fails the case)', chaosOption)
      .option('--junit <file>', 'also write the results as JUnit XML (for CI test reporters)')
      .option('--json', 'print the results as JSON'),
  ).action(async (name: string | undefined, flags: RunFlags) => {
    if (flags.file !== undefined && name !== undefined) throw usageError('give a suite NAME or --file FILE, not both');
    if (flags.file === undefined && name === undefined) throw usageError('which suite? give its NAME (see switchboard suite list) or --file FILE');
    if (flags.config !== undefined && flags.file === undefined) throw usageError('--config goes with --file (a saved suite uses the running switchboard’s providers)');
    const report = flags.file !== undefined ? await runFile(flags.file, flags) : await runSaved(name!, flags);
    if (flags.junit !== undefined) await writeAtomically(flags.junit, junitXml({ suite: report.suite, targetUrl: report.target_url, startedAt: report.started_at, durationMs: report.duration_ms, cases: report.cases as JunitCase[] }));
    process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : reportText(report));
    const { changed, failed } = report.counts;
    if (changed > 0 || failed > 0) throw new CliError(`suite ${report.suite}: ${changed} changed, ${failed} failed`, EXIT_FAILED);
  });
}

async function runFile(file: string, flags: RunFlags): Promise<RunReport> {
  if (flags.to === undefined) throw usageError('--file needs --to URL: where your handler listens, e.g. --to http://localhost:3000/webhooks');
  await readFile(file).catch((error: NodeJS.ErrnoException) => Promise.reject(usageError(`${file}: ${error.code ?? error.message}`)));
  const progress = progressLine();
  try {
    const result = await runSuiteFile({
      file,
      target: flags.to,
      ...(flags.config !== undefined ? { configPath: flags.config } : {}),
      accept: flags.accept === true,
      concurrency: flags.concurrency,
      ...(flags.chaos !== undefined ? { chaos: flags.chaos } : {}),
      env: process.env,
      version: switchboardVersion(),
      onCase: progress.update,
    });
    progress.clear();
    if (result.written) process.stderr.write(`wrote the expectations${result.learned_ignores.length > 0 ? ` and ${result.learned_ignores.length} learned ignores` : ''} into ${file}\n`);
    return { ...result, counts: { pass: result.pass, changed: result.changed, failed: result.failed, new: result.new } };
  } catch (error) {
    progress.clear();
    if (error instanceof SuiteFileError) throw usageError(`${file}: ${error.message}`, 'a suite file is written by `switchboard suite export`; line 1 is its header, each other line a case');
    if (isSwitchboardError(error)) throw usageError(error.message, error.hint, error);
    throw error;
  }
}

async function runSaved(name: string, flags: RunFlags): Promise<RunReport> {
  const client = await connect(flags);
  const { run } = await client.call('runSuite', {
    name,
    ...(flags.to !== undefined ? { target_url: flags.to } : {}),
    concurrency: flags.concurrency,
    ...(flags.accept ? { accept: true } : {}),
    ...(flags.chaos !== undefined ? { chaos: flags.chaos } : {}),
    requested_by: 'cli',
  });
  const finished = await follow(client, run.id, run.total);
  return {
    suite: finished.run.suite,
    target_url: finished.run.target_url,
    started_at: finished.run.started_at,
    duration_ms: finished.run.duration_ms ?? 0,
    chaos: finished.run.chaos,
    counts: { pass: finished.run.pass, changed: finished.run.changed, failed: finished.run.failed, new: finished.run.new },
    learned_ignores: finished.run.learned_ignores,
    cases: finished.cases.map((result) => ({ ...result, diff: result.diff ?? [] })),
  };
}

/** Waits for a run (it goes on in the instance), with its progress on a terminal. */
async function follow(client: ControlClient, id: number, total: number): Promise<ApiOutput<'getSuiteRun'>> {
  const progress = progressLine();
  for (;;) {
    const { run } = await client.call('getSuiteRun', { id, cases: false });
    if (run.status !== 'running') break;
    progress.update(run.done, total);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  progress.clear();
  const finished = await client.call('getSuiteRun', { id, diffs: true });
  if (finished.run.status !== 'done') throw new CliError(`run ${id} of suite ${finished.run.suite} ended ${finished.run.status}${finished.run.warning ? `: ${finished.run.warning}` : ''}`, EXIT_FAILED);
  return finished;
}

function reportText(report: RunReport): string {
  const out = [`suite ${report.suite} → ${report.target_url}  (${report.cases.length} case${report.cases.length === 1 ? '' : 's'}, ${report.duration_ms} ms)`];
  if (report.chaos !== null) out.push(`chaos ${report.chaos}  (repeat it with --chaos ${report.chaos})`);
  const width = Math.max(...report.cases.map((c) => `#${c.case} ${c.provider} ${c.event_type ?? '-'}`.length));
  for (const result of report.cases) {
    const what = printable(`#${result.case} ${result.provider} ${result.event_type ?? '-'}`).padEnd(width);
    const status = result.verdict === 'failed' ? '' : `${result.expected_status ?? '-'} → ${result.status}`;
    const marks = [result.idempotency?.replace('_', ' ') ?? null, ...chaosMarks(result.chaos)].filter((mark) => mark !== null).join(', ');
    out.push(`  ${what}  ${result.verdict.padEnd(7)}  ${status.padEnd(11)}  ${(result.ms === null ? '' : `${result.ms} ms`).padEnd(8)}  ${marks}`.trimEnd());
    for (const difference of result.diff) out.push(`      ${printable(describeDifference(difference))}`);
    if (result.diff_truncated) out.push('      … more differences');
    if (result.reason) out.push(`      ${result.verdict === 'failed' ? '' : 'note: '}${printable(result.reason)}`);
    if (result.warning) out.push(`      warning: ${printable(result.warning)}`);
  }
  const { pass, changed, failed } = report.counts;
  out.push(`${report.cases.length} cases: ${pass} pass, ${changed} changed, ${failed} failed, ${report.counts.new} new`);
  if (report.learned_ignores.length > 0) out.push(`learned ignores (noise between two sends): ${printable(report.learned_ignores.join('  '))}`);
  return `${out.join('\n')}\n`;
}

function exportCommand(): Command {
  return withClientOptions(new Command('export').description('write the suite file (NDJSON, for git and CI)').argument('<name>', 'suite name').option('-o, --output <file>', 'write to this file instead of stdout')).action(
    async (name: string, flags: ClientFlags & { output?: string }) => {
      const { ndjson } = await (await connect(flags)).call('exportSuite', { name });
      if (flags.output === undefined) return void process.stdout.write(ndjson);
      await writeAtomically(flags.output, ndjson);
      process.stderr.write(`exported suite ${name} (${ndjson.split('\n').length - 2} cases) to ${flags.output}\n`);
    },
  );
}

function importCommand(): Command {
  return withClientOptions(new Command('import').description('save a suite from a suite file').argument('<file>', 'a suite file').option('--replace', 'replace the suite of the same name')).action(
    async (file: string, flags: ClientFlags & { replace?: boolean }) => {
      const ndjson = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => Promise.reject(usageError(`${file}: ${error.code ?? error.message}`)));
      const { suite, created } = await (await connect(flags)).call('importSuite', { ndjson, replace: flags.replace === true });
      process.stdout.write(`${created ? 'imported' : 'replaced'} suite ${suite.name}: ${suite.cases} cases, ${suite.expectations} with an expectation\n`);
    },
  );
}

function deleteCommand(): Command {
  return withClientOptions(new Command('delete').description('delete a suite and its runs').argument('<name>', 'suite name')).action(async (name: string, flags: ClientFlags) => {
    await (await connect(flags)).call('deleteSuite', { name });
    process.stdout.write(`deleted suite ${name}\n`);
  });
}

function eventIds(value: string): number[] {
  const ids = value.split(',').map((part) => Number(part.trim().replace(/^#/, '')));
  if (ids.length === 0 || ids.some((id) => !Number.isSafeInteger(id) || id < 1)) throw new InvalidArgumentError('--ids takes event ids separated by commas, e.g. 1042,1043');
  return ids;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** C0/C1 controls and DEL as `\xNN`: what a sender wrote never drives the terminal. */
const printable = terminalSafe;

function progressLine(): { update: (done: number, total: number) => void; clear: () => void } {
  let shown = false;
  return {
    update(done, total) {
      if (!process.stderr.isTTY) return;
      process.stderr.write(`\rrunning… ${done}/${total}\x1b[K`);
      shown = true;
    },
    clear() {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const partial = `${path}.partial`;
  try {
    await writeFile(partial, text, { mode: 0o600 });
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw new CliError(`writing ${path} failed: ${(error as Error).message}`, EXIT_FAILED);
  }
}
