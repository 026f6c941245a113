import { createReadStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EventBus } from '../bus.js';
import { parseConfig, readConfigJson, type Config } from '../config.js';
import { SwitchboardError } from '../errors.js';
import { ndjsonLines } from '../export/importer.js';
import { ProviderSet } from '../provider-set.js';
import { guardedAgent, targetUrl } from '../replay/replay.js';
import { chaosWithSeed, formatChaosSpec, type ChaosProfile, type IdempotencyVerdict } from '../../shared/delivery-lab.js';
import type { CaseChaos, Difference, Verdict } from '../../shared/suites.js';
import type { Answer } from './compare.js';
import { IgnoreRules, MAX_IGNORES } from './json-paths.js';
import { runCases, type CaseOutcome, type ProviderLookup, type RunCase } from './runner.js';
import { caseLine, headerLine, parseSuiteFile, type FileCase } from './suite-file.js';

/**
 * A suite run with no instance and no database (DESIGN §14, CI): the cases come from a suite
 * file, the secrets for re-signing from a config file's providers (the same secret sources as
 * config.json, `{env}` included), the target guard from its `replay.allow_hosts`. A case whose
 * provider has no secret there is sent unsigned, with a warning on its result. `accept` writes
 * the answers (and learned ignores) back into the file, atomically.
 */

export interface FileRunOptions {
  file: string;
  target: string;
  /** A config.json-shaped file; none: no secrets (every signed case goes out unsigned). */
  configPath?: string;
  accept: boolean;
  concurrency: number;
  /** Reordering, delays and duplicates (DESIGN §15); a seed is drawn when it has none (said in the result). */
  chaos?: ChaosProfile;
  env: Readonly<Record<string, string | undefined>>;
  version: string;
  now?: () => number;
  /** Each case as it finishes (progress on a terminal). */
  onCase?: (done: number, total: number) => void;
}

export interface FileCaseResult {
  case: number;
  provider: string;
  event_type: string | null;
  verdict: Verdict;
  status: number | null;
  expected_status: number | null;
  ms: number | null;
  resigned: boolean;
  diff: Difference[];
  diff_truncated: boolean;
  reason: string | null;
  warning: string | null;
  idempotency: IdempotencyVerdict | null;
  chaos: CaseChaos | null;
}

export interface FileRunResult {
  suite: string;
  target_url: string;
  started_at: string;
  duration_ms: number;
  concurrency: number;
  /** The chaos profile in the CLI spelling, its seed included; null without one. */
  chaos: string | null;
  pass: number;
  changed: number;
  failed: number;
  new: number;
  /** Paths learned (only with accept). */
  learned_ignores: string[];
  /** With accept: the file was rewritten. */
  written: boolean;
  cases: FileCaseResult[];
}

const STEP_CASES = 50;

export async function runSuiteFile(options: FileRunOptions): Promise<FileRunResult> {
  const file = await parseSuiteFile(ndjsonLines(createReadStream(options.file), Number.MAX_SAFE_INTEGER));
  const config = await loadRunConfig(options.configPath);
  const target = targetUrl(options.target).href;
  const providers = new ProviderSet(options.env, new EventBus());
  providers.load(config);
  const where = options.configPath ?? 'the config (no --config given)';
  const lookup = (source: RunCase): ProviderLookup => {
    const kind = file.header.providers[source.provider];
    const provider = providers.webhook(source.provider);
    if (!provider) return { provider: undefined, warning: `not re-signed: provider "${source.provider}"${kind ? ` (${kind})` : ''} is not in ${where}; sent without a signature` };
    if (kind && provider.config.kind !== kind) {
      return { provider: undefined, warning: `not re-signed: provider "${source.provider}" is ${provider.config.kind} in ${where} but ${kind} in the suite file; sent without a signature` };
    }
    if (provider.secrets.length === 0 && provider.secretAdvice) {
      return { provider, warning: `not re-signed: provider "${source.provider}" has no usable secret in ${where} (${provider.secretAdvice}); sent without a signature` };
    }
    return { provider };
  };
  const agent = guardedAgent({ allowHosts: () => config.replay.allow_hosts, connectTimeoutMs: () => config.replay.timeout_ms });
  const outcomes: CaseOutcome[] = [];
  const started = new Date(options.now?.() ?? Date.now());
  const startedMs = performance.now();
  let done = 0;
  const chaos = options.chaos ? chaosWithSeed(options.chaos) : null;
  let totals;
  try {
    totals = await runCases(steps(file.cases), {
      targetUrl: target,
      allowHosts: config.replay.allow_hosts,
      timeoutMs: config.replay.timeout_ms,
      concurrency: options.concurrency,
      learnNoise: options.accept,
      chaos,
      rules: { ignore: new IgnoreRules(file.header.ignore), compareHeaders: file.header.compare_headers },
      agent,
      version: options.version,
      now: options.now ?? Date.now,
      secrets: () => providers.allSecrets(),
      provider: lookup,
      onCase: () => options.onCase?.(++done, file.cases.length),
      onStep: (step) => void outcomes.push(...step),
    });
  } finally {
    await agent.close();
  }
  const learned = totals.learnedIgnores.filter((path) => !file.header.ignore.includes(path)).slice(0, Math.max(0, MAX_IGNORES - file.header.ignore.length));
  let written = false;
  if (options.accept) {
    await writeBack(options.file, file.header, file.cases, outcomes, learned);
    written = true;
  }
  return {
    suite: file.header.name,
    target_url: target,
    started_at: started.toISOString(),
    duration_ms: Math.round(performance.now() - startedMs),
    concurrency: options.concurrency,
    chaos: chaos ? formatChaosSpec(chaos) : null,
    ...totals.counts,
    learned_ignores: options.accept ? learned : [],
    written,
    cases: outcomes.map((outcome) => ({
      case: file.cases[outcome.position - 1]!.case,
      provider: outcome.provider,
      event_type: outcome.event_type,
      verdict: outcome.verdict,
      status: outcome.answer?.status ?? null,
      expected_status: outcome.expected_status,
      ms: outcome.response_ms,
      resigned: outcome.resigned,
      diff: outcome.diff,
      diff_truncated: outcome.diff_truncated,
      reason: outcome.reason,
      warning: outcome.warning,
      idempotency: outcome.idempotency,
      chaos: outcome.chaos,
    })),
  };
}

/** The suite file's cases a step at a time; positions are 1…N in file order. */
function* steps(cases: readonly FileCase[]): Generator<RunCase[]> {
  for (let i = 0; i < cases.length; i += STEP_CASES) {
    yield cases.slice(i, i + STEP_CASES).map((entry, offset) => ({
      id: entry.event.source_event_id ?? entry.case,
      position: i + offset + 1,
      provider: entry.event.provider,
      event_type: entry.event.event_type,
      trust_mode: entry.event.trust_mode,
      content_type: entry.event.content_type,
      headers: entry.event.headers,
      payload: entry.event.payload,
      expectation: entry.expectation,
    }));
  }
}

async function loadRunConfig(path: string | undefined): Promise<Config> {
  if (path === undefined) return parseConfig({});
  const json = await readConfigJson(path);
  if (json === undefined) throw new SwitchboardError('config_invalid', `${path}: no such file`, { hint: 'pass a config.json-shaped file with the providers and their secrets ({"env": …} sources work)' });
  return parseConfig(json, path);
}

/** The file again with the new expectations (a case that got no answer keeps its old one). */
async function writeBack(path: string, header: Parameters<typeof headerLine>[0], cases: readonly FileCase[], outcomes: readonly CaseOutcome[], learned: readonly string[]): Promise<void> {
  const answers = new Map<number, Answer>();
  for (const outcome of outcomes) if (outcome.verdict !== 'failed' && outcome.answer) answers.set(outcome.position, outcome.answer);
  const lines = [headerLine({ ...header, ignore: [...header.ignore, ...learned] })];
  cases.forEach((entry, index) => lines.push(caseLine(entry.case, entry.rawEvent, answers.get(index + 1) ?? entry.expectation, header.compare_headers)));
  const temp = join(dirname(path), `.${process.pid}.${Date.now()}.suite.tmp`);
  try {
    await writeFile(temp, `${lines.join('\n')}\n`);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
