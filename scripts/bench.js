// `npm run bench [-- ingest|ui|store|suites|scale [parts…]]`: benchmarks, never tests (these machines are shared and noisy;
// compare only numbers from the same run).
import { buildCoreIfStale, buildRendererIfStale } from './build-if-stale.js';

const which = process.argv[2] ?? 'all';
buildCoreIfStale();
if (which === 'scale') {
  // Minutes at the default million events: only on request, never part of `all`.
  if (process.argv.slice(3).some((part) => part === 'ui')) buildRendererIfStale();
  const { benchScale } = await import('../bench/scale.js');
  await benchScale(process.argv.slice(3));
}
if (which === 'all' || which === 'ingest') {
  const { benchIngest } = await import('../bench/ingest.js');
  await benchIngest();
}
if (which === 'store') {
  // Minutes at the default million events: only on request, never part of `all`.
  const { benchStore } = await import('../bench/store.js');
  await benchStore();
}
if (which === 'all' || which === 'suites') {
  const { benchSuites } = await import('../bench/suites.js');
  await benchSuites();
}
if (which === 'all' || which === 'ui') {
  buildRendererIfStale();
  const ui = await import('../bench/ui.js').catch(() => null);
  if (ui?.benchUi) await ui.benchUi();
  else console.log('\nui: bench/ui.js not present');
}
