/**
 * How deeply a JSON request body may nest. Tally's own bodies nest at most four levels
 * (a provider's `jwks.keys[].…`); the cap keeps hostile bodies, nested tens of thousands
 * deep, from reaching recursive code (request hashing, PostgreSQL's jsonb input), where
 * they would exhaust a stack and answer 5xx.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * A provider's webhook body is the provider's format, not ours (a Replicate prediction
 * carries the model's output): it may nest deeper, and only a hostile one nests this deep.
 */
export const MAX_WEBHOOK_JSON_DEPTH = 512;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one; or NUL. */
const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;
const unstorable = (text: string) => UNSTORABLE.test(text);

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

/**
 * Whether any string or key in a parsed JSON value is not well-formed Unicode (a lone
 * UTF-16 surrogate, which JSON's `\ud800` escapes can spell) or holds NUL: PostgreSQL
 * stores neither in text or jsonb. Iterative, like nestsDeeperThan.
 */
export function holdsUnstorableText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (unstorable(node)) return true;
    } else if (Array.isArray(node)) {
      stack.push(...node);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (unstorable(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
