/**
 * Known bugs the whole-service simulation must catch (issue 36: `npm run sim -- --plant
 * NAME`), behind a switch that is off in every build Tally ships: this module answers
 * false, whatever the environment. Only the simulation's own copy of the build
 * (sim/build.ts) replaces it with one that reads TALLY_SIM_PLANT, so no production build
 * or configuration can reach a plant.
 */
export const PLANT_NAMES = [
  'release_forgets_share',
  'expiry_posted_twice',
  'extension_not_counted',
  'recharge_outside_wallet_lock',
] as const;
export type PlantName = (typeof PLANT_NAMES)[number];

export function planted(_name: PlantName): boolean {
  return false;
}
