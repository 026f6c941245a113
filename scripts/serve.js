// `npm run serve -- [flags]`: build if needed, then run `switchboard serve [flags]` in this process.
import { buildCoreIfStale, buildRendererIfStale } from './build-if-stale.js';

buildCoreIfStale();
buildRendererIfStale();
const { main } = await import('../dist/cli/index.js');
const args = process.argv.slice(2);
await main(args[0] === 'serve' ? args : ['serve', ...args]).catch((error) => {
  process.stderr.write(`switchboard: ${error?.stack ?? error}\n`);
  process.exit(1);
});
