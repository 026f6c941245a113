// Module hooks for running @modelcontextprotocol/conformance@0.1.16 on Node 20: its bundle
// imports `globSync` from "fs" (added in Node 22) at load time, although only its tier-check
// command calls it. Its "fs" import gets node:fs plus a stub, nothing else changes.
const SHIM_URL = 'switchboard-shim:fs';

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: SHIM_URL, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (url === SHIM_URL) {
    return {
      format: 'module',
      shortCircuit: true,
      source: [
        "import fs from 'node:fs';",
        "export * from 'node:fs';",
        'export default fs;',
        "export function globSync() { throw new Error('fs.globSync needs Node 22 (stubbed for the conformance suite)'); }",
      ].join('\n'),
    };
  }
  return nextLoad(url, context);
}
