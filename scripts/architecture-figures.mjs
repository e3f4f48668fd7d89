#!/usr/bin/env node
// The before → after figures of issue 12 for the src/ tree of the checkout it runs in (the
// current directory): `node scripts/architecture-figures.mjs`, or from another checkout
// `node /path/to/tally/scripts/architecture-figures.mjs` (dependency-cruiser is found beside
// this script, so an old checkout needs no `npm ci`). Plain Node: nothing to build.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cruise } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const checkout = process.cwd();
const src = join(checkout, 'src');
if (!existsSync(src)) {
  console.error(`no src/ in ${checkout}: run this from a checkout's top folder`);
  process.exit(2);
}

/** Source files under a folder, as paths relative to the checkout. */
function sourceFiles(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.[cm]?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(checkout, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

/** Lines as `wc -l` counts them. */
function lines(file) {
  return (readFileSync(join(checkout, file), 'utf8').match(/\n/g) ?? []).length;
}

const files = sourceFiles(src);
const sizes = files.map((file) => ({ file, lines: lines(file) })).sort((a, b) => b.lines - a.lines);

// The same resolution as .dependency-cruiser.cjs, with only the cycle rule, so an old checkout
// (which has no config) is measured exactly as the current one.
const cruised = await cruise(
  ['src'],
  {
    baseDir: checkout,
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: join(checkout, 'tsconfig.json') },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    validate: true,
    ruleSet: { forbidden: [{ name: 'no-circular', severity: 'error', from: { path: '^src/' }, to: { circular: true } }] },
  },
  {},
  { tsConfig: extractTSConfig(join(checkout, 'tsconfig.json')) },
);
const result = cruised.output;
// dependency-cruiser reports a cycle once per arrow it starts from; the same files in the same
// order, rotated, are one cycle.
const cycles = new Map();
for (const violation of result.summary.violations.filter((v) => v.rule.name === 'no-circular')) {
  const path = [violation.from, ...violation.cycle.map((step) => step.name)].slice(0, -1);
  const start = path.indexOf([...path].sort()[0]);
  const rotated = [...path.slice(start), ...path.slice(0, start)];
  cycles.set(rotated.join(' → '), rotated);
}
const inCycles = new Set([...cycles.values()].flat());

const devDbFiles = existsSync(join(src, 'dev-db'))
  ? sourceFiles(join(src, 'dev-db'))
  : files.filter((file) => /^src\/db\/(embedded[^/]*|postgres-user)\.ts$/.test(file));
const devDbLines = devDbFiles.reduce((sum, file) => sum + lines(file), 0);

// \s+ spans line breaks: `update webhook_events w\n set ...` and `update\n webhook_events` both count.
const WRITES_EVENTS = /\b(insert\s+into|update|delete\s+from)\s+webhook_events\b/gi;
const writers = files
  .map((file) => ({ file, writes: [...readFileSync(join(checkout, file), 'utf8').matchAll(WRITES_EVENTS)].length }))
  .filter((w) => w.writes > 0);
const writerFolders = new Set(writers.map((w) => w.file.split('/').slice(0, -1).join('/')));

const largest = sizes[0];
console.log(`checkout: ${checkout}`);
console.log(`source files (src/**/*.ts): ${files.length}`);
console.log(`largest file: ${largest.file} (${largest.lines} lines)`);
console.log(`import cycles (file-level, dependency-cruiser no-circular, type imports included): ${cycles.size}`);
for (const cycle of cycles.values()) console.log(`  ${[...cycle, cycle[0]].join(' → ')}`);
if (cycles.size) console.log(`  files on a cycle: ${inCycles.size}`);
console.log(`development-database code: ${devDbLines} lines in ${devDbFiles.length} files (${devDbFiles.join(', ')})`);
console.log(`files that write webhook_events: ${writers.length} in ${writerFolders.size} folders`);
for (const w of writers) console.log(`  ${w.file} (${w.writes} statements)`);
