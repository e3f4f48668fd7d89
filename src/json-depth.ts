/**
 * How deeply a JSON request body may nest. Tally's own bodies nest at most four levels
 * (a provider's `jwks.keys[].…`); the cap keeps hostile bodies, nested tens of thousands
 * deep, from reaching recursive code (request hashing, PostgreSQL's jsonb input), where
 * they would exhaust a stack and answer 5xx.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether a parsed JSON value nests deeper than `max`; iterative, so it never overflows itself. */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
