/**
 * Import rules for src/ (issue 12.3; docs/ARCHITECTURE.md, the folders of src/ at its top). Checked in `npm test`
 * by test/unit/architecture.test.ts, which also checks what these rules cannot say:
 * no cycle between src/'s top-level folders. By hand: `npx depcruise src`.
 *
 * Type-only imports count (tsPreCompilationDeps): a type import is an arrow in the design
 * as much as a value import, even if the compiled JavaScript drops it.
 */

/** The pure core: decisions and arithmetic, no I/O, testable without a database. */
const PURE = '^src/(money|pricing|lifecycle|funds/posting)/';
/** Node's modules that reach files, sockets, processes or threads. */
const NODE_IO = '^(node:)?(fs|net|child_process|http|https|http2|dgram|dns|tls|cluster|worker_threads|readline|inspector)(/|$)';
/**
 * Composition roots: they build the whole program (app, worker, simulator) and may reach
 * anything. demo/ is one too: it composes a whole stack in one process, as cli/ does.
 */
const COMPOSERS = '^src/(cli|demo)/';
/** What the domain is made of, below the runners. */
const DOMAIN = '^src/(money|pricing|lifecycle|funds|ledger|db|dev-db|queue|webhooks|catalog|jobs|idempotency)/';
/** The loops and entry points that drive the domain. */
const RUNNERS = '^src/(worker|duties|reconcile|intake)/';
/**
 * Folders with a door: an index.ts that lists the folder's operations and the refusals each
 * can return (issue "one money kernel", item 3). The rest of src/ imports such a folder only
 * through its door; inside, files import each other directly (one importing its own door
 * would be a cycle). A subfolder with a door of its own is walled off from its parent too:
 * funds/ reaches funds/posting/ through posting/index.ts like everyone else.
 */
const DOORS = ['funds', 'funds/posting', 'funds/payments', 'ledger', 'alerts'];
/** Files allowed past a door, by folder: each with why. */
const PAST_THE_DOOR = {
  // The posting writer's recharge hook (apply-postings.ts → payments/recharge.ts) stays
  // inside: payments/index.ts re-exports payment-settle.ts, whose writers call
  // apply-postings.ts, so through the door this arrow would close a cycle.
  'funds/payments': ['^src/funds/apply-postings\\.ts$'],
};

/** The rule of one folder's door: from outside it, only its index.ts (subfolders with doors of their own have their own rule). */
function doorRule(folder) {
  const inner = DOORS.filter((other) => other.startsWith(`${folder}/`));
  return {
    name: `doors-only-${folder.replace(/\//g, '-')}`,
    severity: 'error',
    comment: `Outside ${folder}/, src/ imports it only through ${folder}/index.ts, which lists its operations and their refusals.`,
    from: { path: '^src/', pathNot: [`^src/${folder}/`, ...(PAST_THE_DOOR[folder] ?? [])] },
    to: { path: `^src/${folder}/`, pathNot: [`^src/${folder}/index\\.ts$`, ...inner.map((sub) => `^src/${sub}/`)] },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Imports point one way: a cycle means neither module can be understood (or tested) without the other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'pure-imports-only-pure',
      severity: 'error',
      comment:
        "money/, pricing/, lifecycle/ and funds/posting/ import only each other: everything else in src/ does I/O or knows about it. plants.ts is pure too (false, always, in every build Tally ships: the simulation's planted bugs, issue 36)",
      from: { path: PURE },
      to: { path: '^src/', pathNot: `${PURE}|^src/plants\\.ts$` },
    },
    {
      name: 'pure-imports-no-io',
      severity: 'error',
      comment: 'The pure folders touch no file, socket or process.',
      from: { path: PURE },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    {
      name: 'pure-imports-no-packages',
      severity: 'error',
      comment: 'The pure folders use no npm package today; one that does no I/O may be allowed here by name (pathNot).',
      from: { path: PURE },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'only-cli-imports-cli',
      severity: 'error',
      comment: 'cli/ composes the program; nothing below it reaches back up.',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'only-composers-import-api',
      severity: 'error',
      comment: 'Domain folders never import api/: the HTTP layer sits on top of them.',
      from: { path: '^src/', pathNot: [COMPOSERS, '^src/api/'] },
      to: { path: '^src/api/' },
    },
    {
      name: 'only-api-imports-intake',
      severity: 'error',
      comment: 'intake/ is the receipt path, reached through HTTP; later stages (worker/) meet it only through queue/.',
      from: { path: '^src/', pathNot: [COMPOSERS, '^src/api/', '^src/intake/'] },
      to: { path: '^src/intake/' },
    },
    {
      name: 'domain-imports-no-runner',
      severity: 'error',
      comment:
        'The loops and entry points (worker/, duties/, reconcile/, intake/) sit on top of the domain; the domain never calls back up into them.',
      from: { path: DOMAIN },
      to: { path: RUNNERS },
    },
    {
      name: 'dev-db-only-from-composers',
      severity: 'error',
      comment: 'The embedded PostgreSQL is for development: only cli/, demo/ and db/connect.ts (which follows the server when serve restarts it) know it.',
      from: { path: '^src/', pathNot: [COMPOSERS, '^src/dev-db/', '^src/db/connect\\.ts$'] },
      to: { path: '^src/dev-db/' },
    },
    ...DOORS.map(doorRule),
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import the cruiser cannot resolve is an arrow missing from every check above.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages whose entry is only in package.json "exports" (csv-parse/sync) resolve as Node resolves them.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
