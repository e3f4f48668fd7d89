import fc from 'fast-check';

/**
 * Hostile values and the mutations that plant them in otherwise valid bodies. Values
 * too big to build as JS objects (nesting tens of thousands deep, arrays of hundreds of
 * thousands of items) travel as markers and are expanded only in the serialised text.
 */

const DEEP = /"@@deep:(arr|obj):(\d+)@@"/g;
const HUGE = /"@@huge:(\d+)@@"/g;

export const deepMarker = (kind: 'arr' | 'obj', depth: number) => `@@deep:${kind}:${depth}@@`;
export const hugeArrayMarker = (length: number) => `@@huge:${length}@@`;

/** JSON.stringify, then markers expanded into their raw JSON text. */
export function serialise(value: unknown): string {
  return JSON.stringify(value)
    .replace(DEEP, (_, kind: string, depth: string) => {
      const n = Number(depth);
      return kind === 'arr' ? '['.repeat(n) + '1' + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    })
    .replace(HUGE, (_, length: string) => `[${'0,'.repeat(Number(length) - 1)}0]`);
}

/** Strings that break parsers, columns and encodings. */
export const evilString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    '\udbff\udfff',
    '\uffff',
    '\ufeffUSD',
    'ＵＳＤ',
    'usd',
    'USD\u0000',
    '💸',
    '\u202eDSU',
    '../../etc/passwd',
    '%00',
    '%2F',
    "'; drop table jobs; --",
    '\\',
    '"',
    '\n',
    '\r\n',
    'null',
    'true',
    '[object Object]',
    '__proto__',
    'constructor',
    'toString',
  ),
  fc
    .constantFrom(100, 201, 256, 501, 1001, 2001, 4097, 70_000, 300_000)
    .chain((n) => fc.constantFrom('x', 'é', '\u0000', '💸', '9').map((c) => c.repeat(n))),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ maxLength: 20 }),
);

/** Amount-like strings: the edges of the money grammar and of the bigint columns. */
export const evilAmount: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '0',
    '0.000000',
    '0.000001',
    '1',
    '1.00',
    '999999999999.999999',
    '1000000000000',
    '1000000000000.000001',
    '10000000000000',
    '9999999999999',
    '9223372036854.775807',
    '9223372036854.775808',
    '9223372036854775807',
    '922337203685477.5807',
    '1e3',
    '1E+3',
    '1e-6',
    '-1',
    '-0',
    '-0.000001',
    '+1',
    '0x10',
    ' 1',
    '1 ',
    '1,000',
    '1_000',
    '.5',
    '5.',
    '1.0000001',
    '1.000000',
    '01',
    '00.1',
    '１２',
    '٣',
    'NaN',
    'Infinity',
    '1\u0000',
    '12.50\u0000',
  ),
  fc.stringMatching(/^-?[0-9]{1,40}(\.[0-9]{0,12})?$/),
  fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
);

/** Numbers at the edges of integers, safe integers, int4, int8 and floats (and literals JSON allows). */
export const evilNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    1.5,
    1e-7,
    2147483647,
    2147483648,
    -2147483649,
    4294967296,
    2 ** 53 - 1,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 63,
    2 ** 64,
    1e15,
    4.5e15,
    1e19,
    1e21,
    1e300,
    1.7976931348623157e308,
    -1e300,
    Number.MIN_VALUE,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.maxSafeInteger(),
);

/** Any hostile value, including structures. */
export const evilValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: evilString, weight: 4 },
  { arbitrary: evilAmount, weight: 3 },
  { arbitrary: evilNumber, weight: 3 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [[]], [null], { '': null }), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.integer({ min: 33, max: 120_000 }).chain((d) => fc.constantFrom(deepMarker('arr', d), deepMarker('obj', d))), weight: 1 },
  { arbitrary: fc.constantFrom(10_000, 100_000, 400_000).map(hugeArrayMarker), weight: 1 },
  { arbitrary: fc.dictionary(evilString, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }), weight: 1 },
);

export const evilKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'hasOwnProperty',
    'toString',
    'valueOf',
    '',
    '\u0000',
    '\ud800',
    'amount',
    'x'.repeat(101),
    'x'.repeat(5000),
  ),
  fc.string({ maxLength: 12 }),
);

/** Sets an own, enumerable property (also for "__proto__", which plain assignment would not). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

type Json = unknown;

/** Every path to an object property or array item in `value`, the root as []. */
function pathsOf(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...prefix, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out);
  return out;
}

function clone(value: Json): Json {
  if (Array.isArray(value)) return value.map(clone);
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(copy, k, clone(v));
    return copy;
  }
  return value;
}

type Mutation =
  | { op: 'set'; pick: number; value: unknown }
  | { op: 'delete'; pick: number }
  | { op: 'add'; pick: number; key: string; value: unknown }
  | { op: 'wrap'; pick: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('set' as const), pick: fc.nat(), value: evilValue }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('add' as const), pick: fc.nat(), key: evilKey, value: evilValue }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('wrap' as const), pick: fc.nat() }), weight: 1 },
);

function apply(root: Json, shared: Mutation): Json {
  // Generated values may be shared instances (fc.constantFrom): never mutate them in place.
  const m = 'value' in shared ? { ...shared, value: clone(shared.value) } : shared;
  const paths = pathsOf(root);
  const path = paths[m.pick % paths.length]!;
  const leaf = path.at(-1);
  let parent: any = root;
  for (const step of path.slice(0, -1)) parent = parent[step];
  const current = path.length === 0 ? root : parent[leaf!];
  const replace = (value: unknown): Json => {
    if (path.length === 0) return value;
    if (Array.isArray(parent)) parent[leaf as number] = value;
    else setOwn(parent, leaf as string, value);
    return root;
  };
  switch (m.op) {
    case 'set':
      return replace(m.value);
    case 'wrap':
      return replace([current]);
    case 'delete':
      if (path.length === 0) return undefined;
      if (Array.isArray(parent)) parent.splice(leaf as number, 1);
      else delete parent[leaf as string];
      return root;
    case 'add':
      if (current !== null && typeof current === 'object' && !Array.isArray(current)) setOwn(current, m.key, m.value);
      else if (Array.isArray(current)) current.push(m.value);
      return root;
  }
}

/** Text-level damage no JS value can express: duplicate keys, bad syntax, odd literals. */
const textDamage: fc.Arbitrary<(text: string) => string> = fc.oneof(
  fc.constant((t: string) => t),
  fc.constantFrom(
    (t: string) => t.slice(0, Math.max(0, t.length - 1)),
    (t: string) => t.slice(0, Math.floor(t.length / 2)),
    (t: string) => `\ufeff${t}`,
    (t: string) => `${t}garbage`,
    (t: string) => `${t}${t}`,
    (t: string) => t.replace('{', '{"amount":"99999999999999","limits":{"input_tokens":1e400},'),
    (t: string) => t.replace(/:(\s*)(\d+)/, ':1e400'),
    (t: string) => t.replace(/:(\s*)(\d+)/, ':123456789012345678901234567890'),
    (t: string) => t.replace(/:(\s*)(\d+)/, ':-0.0'),
    (t: string) => t.replace(/:(\s*)(\d+)/, ':NaN'),
    (t: string) => t.replace(/"/g, "'"),
    (t: string) => `/* c */${t}`,
    (t: string) => ' '.repeat(900_000) + t,
    (t: string) => t + ' '.repeat(1_100_000),
    (t: string) => t.replace(/"[^"]*"/, '"\\ud800"'),
    (t: string) => t.replace(/"[^"]*"/, '"\\u0000"'),
    (t: string) => t.replace(/"[^"]*"/, '"\\uZZZZ"'),
  ),
);

export interface BodyDraft {
  text: string | undefined;
  /** what produced it, for the report */
  how: string;
}

/**
 * A body for a route whose valid body is `valid`: mostly mutations of it (so requests
 * get deep), sometimes anything at all, sometimes nothing.
 */
export function bodyFor(valid: fc.Arbitrary<Json>): fc.Arbitrary<BodyDraft> {
  return fc.oneof(
    {
      arbitrary: fc
        .tuple(
          valid,
          fc.oneof(
            { arbitrary: fc.array(mutation, { minLength: 1, maxLength: 1 }), weight: 3 },
            { arbitrary: fc.array(mutation, { minLength: 2, maxLength: 3 }), weight: 1 },
          ),
          textDamage,
        )
        .map(([v, ms, damage]) => {
          let body = clone(v);
          for (const m of ms) body = apply(body, m);
          const text = body === undefined ? '' : serialise(body);
          return { text: damage(text), how: 'mutated' };
        }),
      weight: 12,
    },
    { arbitrary: valid.map((v) => ({ text: serialise(v), how: 'valid' })), weight: 4 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ text: JSON.stringify(v), how: 'random-json' })), weight: 2 },
    { arbitrary: evilValue.map((v) => ({ text: serialise(v), how: 'evil-root' })), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((s) => ({ text: s, how: 'random-text' })), weight: 1 },
    { arbitrary: fc.constant({ text: undefined, how: 'no-body' }), weight: 1 },
  );
}
