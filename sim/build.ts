import { cp, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './world.js';

/**
 * The build a run drives. Without a plant: dist/ itself, the build Tally ships. With one:
 * a copy of it under .tally/sim-build/ whose plants.js (false, always, in dist/) is replaced
 * by one that reads TALLY_SIM_PLANT — the only way a planted bug is ever reachable.
 */
export async function buildUnderTest(plant: string | undefined): Promise<string> {
  if (plant === undefined) return join(ROOT, 'dist', 'cli', 'main.js');
  const build = join(ROOT, '.tally', 'sim-build');
  const target = join(build, 'dist');
  await rm(build, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  // what the app reads beside dist/ (package.json, migrations/, assets/, node_modules/): the same files, linked
  for (const entry of await readdir(ROOT))
    if (!['dist', '.tally', '.git'].includes(entry)) await symlink(join(ROOT, entry), join(build, entry));
  await cp(join(ROOT, 'dist'), target, { recursive: true, filter: (source) => !/[/\\]dist[/\\](sim|bench)([/\\]|$)/.test(source) });
  await writeFile(
    join(target, 'plants.js'),
    `// The simulation's build (sim/build.ts): the planted bug TALLY_SIM_PLANT names is on.
export { PLANT_NAMES } from '${pathToFileURL(join(ROOT, 'dist', 'plants.js')).href}';
export function planted(name) { return process.env.TALLY_SIM_PLANT === name; }
`,
  );
  return join(target, 'cli', 'main.js');
}

export async function plantNames(): Promise<readonly string[]> {
  const module = (await import(pathToFileURL(join(ROOT, 'dist', 'plants.js')).href)) as { PLANT_NAMES: readonly string[] };
  return module.PLANT_NAMES;
}
