import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The simulation's reference model must not share code with what it checks (issue 36): no
 * file of sim/ imports src/ — the model is written again from docs/CONTRACT.md, and the
 * harness reaches Tally only as a process, over HTTP and SQL (dist/ is loaded at run time
 * for the embedded PostgreSQL and the plants' list, never the money code).
 */
const SIM = fileURLToPath(new URL('../../sim/', import.meta.url));

describe('sim/', () => {
  it('imports nothing from src/', async () => {
    const files = (await readdir(SIM)).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    const offending: string[] = [];
    for (const file of files) {
      const text = await readFile(`${SIM}${file}`, 'utf8');
      for (const [, from] of text.matchAll(/(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/g))
        if (/(^|\/)src\//.test(from!)) offending.push(`${file}: ${from}`);
      for (const [, from] of text.matchAll(/import\(\s*['"]([^'"]+)['"]/g))
        if (/(^|\/)src\//.test(from!)) offending.push(`${file}: ${from}`);
    }
    expect(offending).toEqual([]);
  });
});
