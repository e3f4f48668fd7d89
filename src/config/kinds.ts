import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * How one environment variable becomes a typed value. Each kind reads the text strictly
 * (a whole number is digits, nothing else: no `1e3`, `0x10`, ` 8`), then checks the value
 * against a TypeBox schema; what it refuses is described by `accepts`, which the error
 * message quotes ("PORT: 'abc' is not a port number (1-65535)").
 */
export interface Setting<T, Optional extends boolean = boolean> {
  /** the variable's name, exactly as operators set it */
  env: string;
  /** one line for `tally config` and README's table */
  doc: string;
  /** what a valid value is, completing "'x' is not …" */
  accepts: string;
  /** the value's schema, checked after the text is read */
  schema: TSchema;
  /** the text's value, or undefined when it cannot be read as this kind */
  read(text: string): T | undefined;
  /** what an unset (or empty) variable means; a function for a default that follows other settings */
  fallback: Optional extends true ? undefined : T | ((config: Record<string, unknown>) => T);
  /** README's and `tally config`'s words for the default ("8080", "unset: …") */
  defaultText: string;
  /** never shown: `****(set)`; `url-password`: a URL shown with its password masked */
  secret?: 'secret' | 'url-password';
  /** read only by the test suite (a knob no operator sets) */
  testOnly?: true;
  /** a value that is valid alone but not beside the others: a sentence, or null */
  across?(value: T, config: Record<string, unknown>): string | null;
}

type Common = Pick<Setting<unknown>, 'env' | 'doc' | 'secret' | 'testOnly'> & { defaultText?: string };

const DIGITS = /^\d+$/;

/** A whole number between `min` and `max`. */
export function integer(
  spec: Common & {
    fallback: number | ((config: Record<string, unknown>) => number);
    min: number;
    max?: number;
    accepts?: string;
    across?: (value: number, config: Record<string, unknown>) => string | null;
  },
): Setting<number, false> {
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  return {
    ...spec,
    accepts: spec.accepts ?? `a whole number, ${spec.min} or more`,
    schema: Type.Integer({ minimum: spec.min, maximum: max }),
    read: (text) => (DIGITS.test(text) ? Number(text) : undefined),
    defaultText: spec.defaultText ?? String(spec.fallback),
  };
}

/** A positive number of hours, fractions allowed (tests give a few seconds as 0.001). */
export function hours(spec: Common & { fallback: number }): Setting<number, false> {
  return {
    ...spec,
    accepts: 'a positive number of hours, e.g. 72 or 0.5',
    schema: Type.Number({ exclusiveMinimum: 0 }),
    read: (text) => (/^\d+(\.\d+)?$/.test(text) ? Number(text) : undefined),
    defaultText: spec.defaultText ?? String(spec.fallback),
  };
}

/** Free text matching `pattern` (any text when none); unset means no value. */
export function text(spec: Common & { accepts: string; pattern?: RegExp }): Setting<string, true> {
  return {
    ...spec,
    schema: spec.pattern ? Type.String({ pattern: spec.pattern.source }) : Type.String(),
    read: (value) => value,
    fallback: undefined,
    defaultText: spec.defaultText ?? 'unset',
  };
}

/** Text with a default. */
export function textWithDefault(
  spec: Common & { accepts: string; fallback: string | ((config: Record<string, unknown>) => string) },
): Setting<string, false> {
  return { ...spec, schema: Type.String({ minLength: 1 }), read: (value) => value, defaultText: spec.defaultText ?? String(spec.fallback) };
}

/** One of a few words. */
export function choice<const W extends string>(spec: Common & { words: readonly W[]; fallback: W }): Setting<W, false> {
  return {
    ...spec,
    accepts: `one of ${spec.words.join(', ')}`,
    schema: Type.Union(spec.words.map((word) => Type.Literal(word))),
    read: (value) => value as W,
    defaultText: spec.defaultText ?? spec.fallback,
  };
}

/** `1` on, `0` (or unset) off. */
export function flag(spec: Common): Setting<boolean, false> {
  return {
    ...spec,
    accepts: '1 (on) or 0 (off)',
    schema: Type.Boolean(),
    read: (value) => (value === '1' ? true : value === '0' ? false : undefined),
    fallback: false,
    defaultText: spec.defaultText ?? '0 (off)',
  };
}

/** A comma-separated list of known names (spaces around names ignored). */
export function names<const W extends string>(spec: Common & { words: readonly W[] }): Setting<W[], false> {
  return {
    ...spec,
    accepts: `a comma-separated list of ${spec.words.join(', ')}`,
    schema: Type.Array(Type.Union(spec.words.map((word) => Type.Literal(word)))),
    read: (value) =>
      value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean) as W[],
    fallback: [],
    defaultText: spec.defaultText ?? 'none',
  };
}

/** Whether a value read from the text passes its setting's schema. */
export function fits(setting: Setting<unknown>, value: unknown): boolean {
  return value !== undefined && Value.Check(setting.schema, value);
}
