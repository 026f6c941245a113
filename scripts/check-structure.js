// `npm run lint`'s structure check (with .dependency-cruiser.cjs): no import circle between
// folders. dependency-cruiser's own rules see circles of files; two folders that import each
// other through different files form no file circle, yet they are one tangle to a reader (issue
// #21: export/ ↔ api/, queue/ ↔ test-events/). A unit is a folder of src/core (its subfolders
// folded in), a file at the root of src/core, or one of the other zones of src/.
import { cruise } from 'dependency-cruiser';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const config = require('../.dependency-cruiser.cjs');
const result = await cruise(['src'], { ...config.options, validate: false });

const unitOf = (path) => {
  const core = /^src\/core\/([^/]+)\//.exec(path);
  if (core) return `src/core/${core[1]}/`;
  if (/^src\/core\/[^/]+$/.test(path)) return path;
  const zone = /^src\/([^/]+)\//.exec(path);
  return zone ? `src/${zone[1]}/` : null;
};

const edges = new Map();
const why = new Map();
for (const module of result.output.modules) {
  const from = unitOf(module.source);
  if (!from) continue;
  for (const dependency of module.dependencies) {
    const to = unitOf(dependency.resolved);
    if (!to || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
    const key = `${from} -> ${to}`;
    if (!why.has(key)) why.set(key, `${module.source} -> ${dependency.resolved}`);
  }
}

// Tarjan's strongly connected components: every component of more than one unit is a circle.
let index = 0;
const stack = [];
const state = new Map();
const circles = [];
function visit(unit) {
  state.set(unit, { index, low: index, onStack: true });
  index++;
  stack.push(unit);
  for (const next of edges.get(unit) ?? []) {
    if (!state.has(next)) {
      visit(next);
      state.get(unit).low = Math.min(state.get(unit).low, state.get(next).low);
    } else if (state.get(next).onStack) {
      state.get(unit).low = Math.min(state.get(unit).low, state.get(next).index);
    }
  }
  if (state.get(unit).low === state.get(unit).index) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      state.get(member).onStack = false;
      component.push(member);
    } while (member !== unit);
    if (component.length > 1) circles.push(component);
  }
}
for (const unit of edges.keys()) if (!state.has(unit)) visit(unit);

if (circles.length === 0) {
  console.log(`structure: no circle between folders (${edges.size} units)`);
} else {
  for (const component of circles) {
    console.error(`structure: these import each other: ${component.join(', ')}`);
    const members = new Set(component);
    for (const from of component) for (const to of edges.get(from) ?? []) if (members.has(to)) console.error(`  ${why.get(`${from} -> ${to}`)}`);
  }
  process.exit(1);
}
