// `npm run electronegativity`: Doyensec's Electron security scanner over the sources, failing the
// run on any HIGH finding that is not in scripts/electronegativity-allowlist.json (each entry
// with a justification), and on any file the scanner could not parse (it would silently skip it).
//
// Why a wrapper: the CLI always exits 0, and its CSV output is written by two un-awaited
// writeFile calls (header and rows) that can race. Its programmatic `run()` returns the same
// findings as objects, with the severity and the parse errors, so that is what this calls.
// Offline: the Electron version is given (read from node_modules/electron), and the one check
// that downloads Electron's release list (AvailableSecurityFixesGlobalCheck) is skipped; the
// tool still tries to fetch translations and says so on stderr, which is harmless.
//
// usage: node scripts/electronegativity.js [--input DIR] [--allowlist FILE]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = dirname(import.meta.dirname);
const require = createRequire(import.meta.url);

function usage(message) {
  process.stderr.write(`electronegativity: ${message}\nusage: node scripts/electronegativity.js [--input DIR] [--allowlist FILE]\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      input: { type: 'string', default: join(root, 'src') },
      allowlist: { type: 'string', default: join(root, 'scripts', 'electronegativity-allowlist.json') },
    },
  }));
} catch (error) {
  usage(error.message);
}

/** [{ check, file, justification, sample? }]: `file` relative to the input, `sample` a substring of the flagged code. */
function readAllowlist(path) {
  let entries;
  try {
    entries = JSON.parse(readFileSync(path, 'utf8')).allow;
  } catch (error) {
    usage(`cannot read the allowlist ${path}: ${error.message}`);
  }
  if (!Array.isArray(entries)) usage(`${path}: expected { "allow": [ … ] }`);
  entries.forEach((entry, index) => {
    for (const key of ['check', 'file', 'justification']) {
      if (typeof entry?.[key] !== 'string' || entry[key].trim() === '') usage(`${path}: allow[${index}].${key} must be a non-empty string`);
    }
    if (entry.sample !== undefined && typeof entry.sample !== 'string') usage(`${path}: allow[${index}].sample must be a string`);
  });
  return entries;
}

const input = resolve(values.input);
const allowlist = readAllowlist(resolve(values.allowlist));
const electronVersion = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
const scanner = require('@doyensec/electronegativity');
const run = scanner.default ?? scanner;

const { issues, errors } = await run(
  {
    input,
    isRelative: true,
    electronVersionOverride: electronVersion,
    customScan: [],
    excludeFromScan: ['availablesecurityfixesglobalcheck'],
    parserPlugins: [],
  },
  false,
);

const used = new Set();
const allowedBy = (issue) =>
  allowlist.find((entry, index) => {
    const match = entry.check === issue.id && entry.file === issue.file && (entry.sample === undefined || (issue.sample ?? '').includes(entry.sample));
    if (match) used.add(index);
    return match;
  });

let failures = 0;
const out = (line) => process.stdout.write(`${line}\n`);
out(`electronegativity: scanned ${relative(root, input) || '.'} as Electron ${electronVersion}`);
for (const issue of issues) {
  const severity = issue.severity.name;
  const where = `${issue.file}:${issue.location.line}:${issue.location.column}`;
  const sample = (issue.sample ?? '').trim().slice(0, 100);
  if (severity !== 'HIGH') {
    out(`  ${severity.padEnd(13)} ${issue.id} ${where} ${sample}`);
    continue;
  }
  const entry = allowedBy(issue);
  if (entry) {
    out(`  HIGH (allowed) ${issue.id} ${where} — ${entry.justification}`);
  } else {
    failures++;
    out(`  HIGH          ${issue.id} ${where} ${sample}\n                ${issue.description} (${issue.shortenedURL})`);
  }
}
for (const error of errors.filter((e) => !e.tolerable)) {
  failures++;
  out(`  PARSE ERROR   ${relative(input, error.file)}: ${error.message} (the scanner skipped this file)`);
}
allowlist.forEach((entry, index) => {
  if (!used.has(index)) out(`  note: allowlist entry ${entry.check} ${entry.file} matched nothing; remove it`);
});

out(failures === 0 ? 'electronegativity: no HIGH findings outside the allowlist' : `electronegativity: ${failures} problem(s) — fix them or justify them in the allowlist`);
process.exit(failures === 0 ? 0 : 1);
