#!/usr/bin/env node
// Entry point of the installed package: runs the compiled CLI.
import { main } from '../dist/cli/index.js';

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`switchboard: ${error?.stack ?? error}\n`);
  process.exit(1);
});
