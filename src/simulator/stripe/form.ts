/**
 * Stripe's request bodies: application/x-www-form-urlencoded with bracketed keys
 * (`line_items[0][price_data][currency]=usd`), as its SDKs encode them. Parsed into
 * nested objects and arrays; every value stays a string, as Stripe receives it.
 */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };

export function parseForm(body: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = keyPath(rawKey);
    let node: Record<string, FormValue> | FormValue[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const nextIsIndex = !last && /^\d*$/.test(path[i + 1]!);
      const slot = Array.isArray(node) ? (part === '' ? node.length : Number(part)) : part;
      const container = node as Record<string | number, FormValue>;
      if (last) {
        container[slot] = value;
        return;
      }
      if (container[slot] === undefined || typeof container[slot] === 'string') container[slot] = nextIsIndex ? [] : {};
      node = container[slot] as Record<string, FormValue> | FormValue[];
    });
  }
  return root;
}

function keyPath(key: string): string[] {
  const first = key.indexOf('[');
  if (first < 0) return [key];
  const parts = [key.slice(0, first)];
  for (const match of key.slice(first).matchAll(/\[([^\]]*)\]/g)) parts.push(match[1]!);
  return parts;
}
