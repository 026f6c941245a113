import type { ForwardProblem } from '../../shared/api.js';
import type { ProviderConfig } from '../config.js';
import type { ChaosProfile } from '../../shared/delivery-lab.js';
import { checkTargetHost, TargetRefusedError } from './target-guard.js';

/**
 * The URLs a provider forwards every accepted event to, in config order. Forward rules, the
 * default replay target (DESIGN §7) and `list_providers` all read them here, so a new way of
 * writing a rule in config.json (`forward: [{to, chaos}]` beside `forward_to`) is added once.
 */
export function forwardTargets(provider: ProviderConfig | undefined): string[] {
  return forwardRules(provider).map((rule) => rule.to);
}

/** Every forward rule of a provider: `forward_to` URLs (no chaos), then `forward[]`, without repeating a URL. */
export function forwardRules(provider: ProviderConfig | undefined): { to: string; chaos?: ChaosProfile }[] {
  if (!provider) return [];
  const rules: { to: string; chaos?: ChaosProfile }[] = provider.forward_to.map((to) => ({ to }));
  for (const rule of provider.forward ?? []) if (!rules.some((known) => known.to === rule.to)) rules.push(rule.chaos ? { to: rule.to, chaos: rule.chaos } : { to: rule.to });
  return rules;
}

/**
 * Forward targets that cannot deliver: refused by the target guard as written, or whose last
 * attempt got no answer (`lastFailure`, the forward rules' own memory).
 */
export function forwardProblems(targets: readonly string[], allowHosts: readonly string[], lastFailure: (target: string) => string | null): ForwardProblem[] {
  const problems: ForwardProblem[] = [];
  for (const target of targets) {
    try {
      checkTargetHost(new URL(target).hostname, allowHosts);
    } catch (error) {
      if (error instanceof TargetRefusedError) {
        problems.push({ target, problem: 'refused_by_guard', message: `${error.message} — ${error.hint}` });
        continue;
      }
      problems.push({ target, problem: 'refused_by_guard', message: 'not a valid URL' });
      continue;
    }
    const failure = lastFailure(target);
    if (failure !== null) problems.push({ target, problem: 'not_answering', message: failure });
  }
  return problems;
}
