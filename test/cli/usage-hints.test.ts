import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteCommand } from '../../src/cli/commands/suite.js';
import { runCli } from '../helpers/cli.js';

/**
 * A usage error ends with a pointer to the help of the command that was mistyped, by its full
 * path: `switchboard run --help` after a bad `suite run` would send the user to an unknown verb.
 * Usage errors are caught while parsing, so no instance is needed (and none is reached).
 */

const VERBS = ['serve', 'events', 'show', 'replay', 'trigger', 'export', 'import', 'providers', 'suite', 'types'];
// Every subcommand of `suite`, read from the command itself so a new one is covered too.
const SUITE_VERBS = suiteCommand().commands.map((command) => command.name());

let home: string;
const cli = (...args: string[]) => runCli(args, { SWITCHBOARD_HOME: join(home, 'no-home') });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'switchboard-usage-'));
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('the --help pointer after a usage error', () => {
  it('names `suite run` after a bad --chaos spec', async () => {
    const bad = await cli('suite', 'run', 'payments', '--chaos', 'nonsense');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^switchboard: .*--chaos: unknown part "nonsense"/), '(see: switchboard suite run --help)']);
  });

  it.each(SUITE_VERBS)('names `suite %s` after an unknown option', async (verb) => {
    const bad = await cli('suite', verb, '--no-such-flag');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trimEnd().split('\n').at(-1)).toBe(`(see: switchboard suite ${verb} --help)`);
  });

  it.each(VERBS)('names `%s` after an unknown option', async (verb) => {
    const bad = await cli(verb, '--no-such-flag');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trimEnd().split('\n').at(-1)).toBe(`(see: switchboard ${verb} --help)`);
  });
});
