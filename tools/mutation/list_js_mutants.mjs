// Every StrykerJS mutant of one script, numbered as a StrykerJS run that mutates that file alone numbers them (its
// own instrumenter, with StrykerJS's default mutator options), as JSON: [{id, mutator, replacement, line, column}]
// (lines from 1, columns from 0, as Python's ast counts them).
//
//     node tools/mutation/list_js_mutants.mjs <StrykerJS's npm prefix> <script>
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [prefix, script] = process.argv.slice(2);
if (!prefix || !script) {
  console.error('usage: node list_js_mutants.mjs <StrykerJS npm prefix> <script>');
  process.exit(2);
}
const entry = join(resolve(prefix), 'node_modules/@stryker-mutator/instrumenter/dist/src/index.js');
const { Instrumenter } = await import(pathToFileURL(entry).href);
const quiet = { isDebugEnabled: () => false, isTraceEnabled: () => false, debug() {}, info() {}, warn() {}, trace() {} };
const instrumenter = new Instrumenter(quiet);
const name = resolve(script);
const result = await instrumenter.instrument([{ name, mutate: true, content: readFileSync(name, 'utf8') }],
  { ignorers: [], plugins: null, excludedMutations: [] });
console.log(JSON.stringify(result.mutants.map((m) => ({
  id: m.id, mutator: m.mutatorName, replacement: m.replacement,
  line: m.location.start.line + 1, column: m.location.start.column,
}))));
