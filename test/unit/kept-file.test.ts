import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keepFileOnce, readKeptFile } from '../../src/kept-file.js';

/** The server secret and the admin token are kept this way: made once, by one of many starting processes. */
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('keepFileOnce', () => {
  it('makes the file once, mode 0600, and every concurrent caller reads the one that won', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'tally-kept-')), 'data');
    dirs.push(dir);
    expect(await readKeptFile(dir, 'token')).toBeNull();
    let made = 0;
    const results = await Promise.all(Array.from({ length: 20 }, () => keepFileOnce(dir, 'token', () => `candidate-${++made}\n`)));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results[0]!.path).toBe(join(dir, 'token'));
    expect((await stat(join(dir, 'token'))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['token']); // no candidate left behind
    const later = await keepFileOnce(dir, 'token', () => 'never used');
    expect(later).toEqual({ text: results[0]!.text, path: join(dir, 'token'), created: false });
    expect(await readKeptFile(dir, 'token')).toBe(results[0]!.text);
  });
});
