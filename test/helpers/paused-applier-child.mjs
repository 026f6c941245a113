// A switchboard (the built core, as `switchboard serve` runs it) whose journal applier stops
// after APPLY_FIRST events: deliveries keep being acknowledged from the journal, so a SIGKILL
// finds the journal partly applied. Prints the receiver URL once started.
import { createSwitchboard } from '../../dist/core/switchboard.js';

const dataDir = process.argv[2];
const applyFirst = Number(process.env.APPLY_FIRST ?? 50);
let applied = 0;
const sb = createSwitchboard({
  dataDir,
  env: process.env,
  databaseInWorker: true,
  rendererDir: null,
  journal: {
    onApplied: (events) => {
      applied += events.length;
      if (applied >= applyFirst) sb.journal.pauseApplier();
    },
  },
});
await sb.start();
process.stdout.write(`receiver ${sb.url.receiver}\n`);
