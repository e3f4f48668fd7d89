import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// Issue 12.3 / docs/ARCHITECTURE.md (the folders of src/, at its top): imports point one way along the flow, with no
// cycles. The file-level rules live in .dependency-cruiser.cjs; the folder-level check is here
// because a folder cycle can be made of arrows that form no file cycle.

const root = fileURLToPath(new URL('../../', import.meta.url));

/** One arrow between two top-level parts of src/, with the imports that make it. */
interface FolderArrow {
  from: string;
  to: string;
  imports: string[];
}

/** A module's part of src/: its top-level folder (`src/ledger/`), or itself for a file directly in src/. */
function partOf(source: string): string | undefined {
  const match = /^src\/([^/]+)(\/)?/.exec(source);
  if (!match) return undefined;
  return match[2] ? `src/${match[1]}/` : source;
}

/**
 * Collapses modules to their part of src/ and returns the arrows that lie on a cycle between
 * parts: those inside a strongly connected group of two or more parts (every arrow inside
 * such a group lies on some cycle). Each group is one entry, its arrows sorted.
 */
function folderCycles(modules: readonly { source: string; dependencies: readonly { resolved: string }[] }[]): FolderArrow[][] {
  const arrows = new Map<string, Map<string, string[]>>();
  for (const module of modules) {
    const from = partOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = partOf(dependency.resolved);
      if (!to || to === from) continue;
      const targets = arrows.get(from) ?? new Map<string, string[]>();
      arrows.set(from, targets);
      const imports = targets.get(to) ?? [];
      targets.set(to, imports);
      imports.push(`${module.source} → ${dependency.resolved}`);
    }
  }
  return stronglyConnected(arrows)
    .filter((group) => group.size > 1)
    .map((group) =>
      [...group]
        .flatMap((from) =>
          [...(arrows.get(from) ?? [])].filter(([to]) => group.has(to)).map(([to, imports]) => ({ from, to, imports: imports.sort() })),
        )
        .sort((a, b) => `${a.from} ${a.to}`.localeCompare(`${b.from} ${b.to}`)),
    );
}

/** Tarjan's algorithm over the part graph (a few dozen nodes, so recursion depth is no concern). */
function stronglyConnected(arrows: Map<string, Map<string, string[]>>): Set<string>[] {
  const nodes = new Set<string>([...arrows.keys(), ...[...arrows.values()].flatMap((targets) => [...targets.keys()])]);
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: Set<string>[] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    lowLink.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of arrows.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!));
      }
    }
    if (lowLink.get(node) !== index.get(node)) return;
    const group = new Set<string>();
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      group.add(member);
      if (member === node) break;
    }
    groups.push(group);
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node);
  return groups;
}

function describeViolation(violation: IViolation): string {
  const cycle = violation.cycle?.length ? ` (cycle: ${[violation.from, ...violation.cycle.map((step) => step.name)].join(' → ')})` : '';
  return `${violation.rule.name}: ${violation.from} → ${violation.to}${cycle}`;
}

function describeFolderCycle(arrows: FolderArrow[]): string {
  const parts = [...new Set(arrows.map((arrow) => arrow.from))].sort();
  const lines = arrows.map((arrow) => `  ${arrow.from} → ${arrow.to}, by:\n${arrow.imports.map((i) => `      ${i}`).join('\n')}`);
  return `folder cycle among ${parts.join(', ')}:\n${lines.join('\n')}`;
}

/** Cruises `src` under `baseDir` with the project's rules, as `npx depcruise src` does. */
async function cruiseSrc(baseDir: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(`${root}.dependency-cruiser.cjs`);
  const reported = await cruise(['src'], { ...options, baseDir }, {}, { tsConfig: extractTSConfig(`${root}tsconfig.json`) });
  if (typeof reported.output === 'string') throw new Error('dependency-cruiser answered text, not a cruise result');
  return reported.output;
}

describe('import structure of src/', () => {
  let result: ICruiseResult;

  beforeAll(async () => {
    result = await cruiseSrc(root);
  });

  it('keeps every rule of .dependency-cruiser.cjs (no import cycle, pure folders without I/O, nothing reaching up into cli/, api/ or the runners, funds/, ledger/ and alerts/ only through their doors)', () => {
    expect(result.summary.totalCruised).toBeGreaterThan(50);
    expect(result.summary.violations.map(describeViolation)).toEqual([]);
  });

  it('has no cycle between the top-level folders of src/', () => {
    expect(folderCycles(result.modules).map(describeFolderCycle)).toEqual([]);
  });
});

describe('the rules of .dependency-cruiser.cjs', () => {
  it('catch each forbidden import of test/fixtures/architecture and allow the composers theirs, and the doors theirs', async () => {
    const fixture = await cruiseSrc(`${root}test/fixtures/architecture/`);
    const found = fixture.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^.*node_modules\/(pg)\/.*$/, '$1')}`);
    expect(found.sort()).toEqual(
      [
        'dev-db-only-from-composers: src/db/pool.ts → src/dev-db/server.ts',
        'domain-imports-no-runner: src/queue/claim.ts → src/worker/loop.ts',
        'doors-only-alerts: src/ledger/hold.ts → src/alerts/raise.ts',
        'doors-only-funds: src/ledger/hold.ts → src/funds/credit.ts',
        'doors-only-funds-payments: src/ledger/hold.ts → src/funds/payments/recharge.ts',
        'doors-only-funds-posting: src/funds/credit.ts → src/funds/posting/post.ts',
        'doors-only-funds-posting: src/jobs/submit.ts → src/funds/posting/post.ts',
        'doors-only-ledger: src/jobs/submit.ts → src/ledger/hold.ts',
        'only-api-imports-intake: src/worker/loop.ts → src/intake/receive.ts',
        'no-circular: src/cli/main.ts → src/db/pool.ts',
        'no-unresolvable: src/ledger/entries.ts → ./missing.js',
        'only-cli-imports-cli: src/db/pool.ts → src/cli/main.ts',
        'only-composers-import-api: src/db/pool.ts → src/api/app.ts',
        'pure-imports-no-io: src/money/amount.ts → fs',
        'pure-imports-no-packages: src/money/amount.ts → pg',
        'pure-imports-only-pure: src/money/amount.ts → src/db/pool.ts',
      ].sort(),
    );
  });
});

describe('folderCycles', () => {
  it('finds a folder cycle made of arrows that form no file cycle, naming the imports of each arrow', () => {
    const modules = [
      { source: 'src/ledger/a.ts', dependencies: [{ resolved: 'src/jobs/b.ts' }, { resolved: 'src/ledger/d.ts' }] },
      { source: 'src/jobs/b.ts', dependencies: [] },
      { source: 'src/jobs/c.ts', dependencies: [{ resolved: 'src/ledger/d.ts' }, { resolved: 'src/money/index.ts' }] },
      { source: 'src/ledger/d.ts', dependencies: [{ resolved: 'node_modules/pg/lib/index.js' }] },
      { source: 'src/money/index.ts', dependencies: [] },
    ];
    expect(folderCycles(modules)).toEqual([
      [
        { from: 'src/jobs/', to: 'src/ledger/', imports: ['src/jobs/c.ts → src/ledger/d.ts'] },
        { from: 'src/ledger/', to: 'src/jobs/', imports: ['src/ledger/a.ts → src/jobs/b.ts'] },
      ],
    ]);
  });

  it('finds none where arrows between folders point one way, and counts a file directly in src/ as its own part', () => {
    const modules = [
      { source: 'src/worker/loop.ts', dependencies: [{ resolved: 'src/ledger/settle.ts' }, { resolved: 'src/ids.ts' }] },
      { source: 'src/ledger/settle.ts', dependencies: [{ resolved: 'src/ids.ts' }, { resolved: 'src/ledger/entries.ts' }] },
      { source: 'src/ledger/entries.ts', dependencies: [{ resolved: 'src/ledger/settle.ts' }] },
      { source: 'src/ids.ts', dependencies: [] },
    ];
    expect(folderCycles(modules)).toEqual([]);
  });
});
