import { describe, expect, it } from 'vitest';
import { locateConfigProblem } from '../../src/core/config-problem.js';

/**
 * A refused hand edit of config.json, pointed at: the JSON path and line:column (issue #26.7),
 * for the ways a hand edit goes wrong — a comment, a trailing comma, a cut-off file, a wrong type,
 * an unknown key — never JSON.parse's "position 2217".
 */

const FILE = '/home/ada/.switchboard/config.json';
const VALID = `{
  "receiver": { "port": 7777 },
  "providers": [
    { "name": "github", "kind": "github", "secrets": [{ "env": "GITHUB_WEBHOOK_SECRET" }] },
    { "name": "stripe", "kind": "stripe", "secrets": [{ "env": "STRIPE_WEBHOOK_SECRET" }] }
  ]
}
`;

const locate = (text: string) => locateConfigProblem(FILE, text, 'the reason the watcher logged');

describe('locateConfigProblem', () => {
  it('points at a comment', () => {
    const text = VALID.replace('    { "name": "stripe"', '    // stripe is new\n    { "name": "stripe"');
    expect(locate(text)).toEqual({ file: FILE, message: 'a comment: config.json is plain JSON', path: 'providers[1]', line: 5, column: 5 });
  });

  it('points at a trailing comma', () => {
    const text = VALID.replace('"STRIPE_WEBHOOK_SECRET" }] }\n', '"STRIPE_WEBHOOK_SECRET" }] },\n');
    expect(locate(text)).toMatchObject({ path: 'providers[2]', line: 6, column: 3, message: expect.stringMatching(/trailing comma/) });
  });

  it('says a cut-off file is cut off, where it ends', () => {
    const text = VALID.slice(0, VALID.indexOf('"stripe"') + 4);
    expect(locate(text)).toMatchObject({ path: 'providers[1].name', line: 5, message: expect.stringMatching(/cut off/) });
  });

  it('says an empty file is empty', () => {
    expect(locate('  \n')).toMatchObject({ path: '(top level)', line: 2, message: expect.stringMatching(/empty: write \{\}/) });
  });

  it('points at a value of the wrong type, with its JSON path', () => {
    const text = VALID.replace('"port": 7777', '"port": "7777"');
    expect(locate(text)).toMatchObject({ path: 'receiver.port', line: 2, column: 25, message: expect.stringMatching(/number/) });
  });

  it('points at the object holding an unknown key or missing a field', () => {
    const unknown = locate(VALID.replace('"kind": "stripe",', '"kind": "stripe", "secret": "x",'));
    expect(unknown).toMatchObject({ path: 'providers[1]', line: 5, column: 5 });
    expect(unknown.message).toMatch(/secret/);
    const missing = locate(VALID.replace('"name": "github", ', ''));
    expect(missing).toMatchObject({ path: 'providers[0].name', line: 4, column: 5 });
  });

  it('keeps the reason when the file could not be read at all', () => {
    expect(locateConfigProblem(FILE, null, 'cannot be read (EACCES)')).toEqual({ file: FILE, message: 'cannot be read (EACCES)', path: null, line: null, column: null });
  });
});
