/**
 * Validation failures in words a person can act on: which field, what form it must take,
 * which values are allowed. Validators (ajv for the API, TypeBox for webhook bodies) say
 * "must be string" or "Expected union value"; both are turned into a SchemaFault and
 * described here, from the very schema that refused the value, so the message cannot
 * drift from what is enforced.
 */

/** A JSON Schema node, as validators hand it back. */
export type SchemaNode = Record<string, unknown>;

export type FaultKind =
  | 'required'
  | 'unknown_field'
  | 'type'
  | 'allowed_values'
  | 'pattern'
  | 'format'
  | 'length'
  | 'range'
  | 'items'
  | 'properties'
  | 'key'
  | 'other';

export interface SchemaFault {
  kind: FaultKind;
  /** the field at fault, in dotted form (`data.usage`, `unit_prices.input_tokens`, `secrets[0]`); '' for the whole value */
  param: string;
  /** the schema the value had to match (of the missing field, for `required`) */
  schema?: SchemaNode;
  /** the value that was refused, when there was one */
  value?: unknown;
  /** for `unknown_field`: the fields the object does take */
  known?: string[];
  /** the validator's own words, used when nothing better can be said */
  fallback?: string;
}

/** Path segments (`['data', 'usage']`, `['secrets', '0']`) in dotted form. */
export function paramOf(segments: string[]): string {
  return segments.reduce((param, segment) => (/^[0-9]+$/.test(segment) ? `${param}[${segment}]` : param ? `${param}.${segment}` : segment), '');
}

/** JSON Pointer (`/data/usage`, ajv's instancePath) in dotted form. */
export function paramOfPointer(pointer: string): string {
  if (!pointer) return '';
  return paramOf(
    pointer
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
  );
}

/** The allowed values of an enum, a const, or a union of consts; null when the schema is not one. */
export function allowedValues(schema: SchemaNode | undefined): unknown[] | null {
  if (!schema) return null;
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  if ('const' in schema) return [schema.const];
  const branches = (schema.anyOf ?? schema.oneOf) as SchemaNode[] | undefined;
  if (!Array.isArray(branches)) return null;
  const values: unknown[] = [];
  for (const branch of branches) {
    const inner = allowedValues(branch);
    if (inner) values.push(...inner);
    else if (branch.type === 'null') values.push(null);
    else return null;
  }
  return values;
}

function list(values: unknown[]): string {
  const shown = values.map((v) => JSON.stringify(v));
  return shown.length <= 1 ? (shown[0] ?? 'nothing') : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
}

function range(min: unknown, max: unknown, unit: string): string {
  if (typeof min === 'number' && typeof max === 'number') return min === max ? `exactly ${min}${unit}` : `${min} to ${max}${unit}`;
  if (typeof min === 'number') return `at least ${min}${unit}`;
  if (typeof max === 'number') return `at most ${max}${unit}`;
  return '';
}

/**
 * The generic form ("a string of 1 to 200 characters") with the schema's own words. A
 * description written as a noun phrase ("a decimal string in major units …") says it
 * better than the generic form and replaces it; any other is added in brackets.
 */
function withNotes(base: string, schema: SchemaNode): string {
  const description = typeof schema.description === 'string' ? schema.description : '';
  const example = Array.isArray(schema.examples) && schema.examples.length > 0 && !description.includes('e.g.') ? `e.g. ${JSON.stringify(schema.examples[0])}` : '';
  if (/^(a|an|one) /.test(description)) return [description, example].filter(Boolean).join(', ');
  const notes = [description, example].filter(Boolean).join(', ');
  return notes ? `${base} (${notes})` : base;
}

/** What a value must be, in words: "a string of 1 to 200 characters", "one of "a" or "b"". */
export function expectation(schema: SchemaNode | undefined): string {
  if (!schema) return 'a valid value';
  const allowed = allowedValues(schema);
  if (allowed) return allowed.length === 1 ? list(allowed) : `one of ${list(allowed)}`;
  const branches = (schema.anyOf ?? schema.oneOf) as SchemaNode[] | undefined;
  if (Array.isArray(branches)) {
    const forms = branches.map((b) => (b.type === 'null' ? 'null' : expectation(b)));
    return forms.join(', or ');
  }
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'uuid') return 'an id (a UUID)';
      const length = range(schema.minLength, schema.maxLength, ' characters');
      return withNotes(length ? `a string of ${length}` : 'a string', schema);
    }
    case 'integer': {
      const bounds = range(schema.minimum, schema.maximum, '');
      return withNotes(bounds ? `a whole number ${/^[0-9-]/.test(bounds) ? `from ${bounds}` : bounds}` : 'a whole number', schema);
    }
    case 'number':
      return withNotes('a number', schema);
    case 'boolean':
      return 'true or false';
    case 'array': {
      const items = schema.items as SchemaNode | undefined;
      const count = range(schema.minItems, schema.maxItems, ' items');
      return withNotes(`a list${count ? ` of ${count}` : ''}${items ? `, each ${expectation(items)}` : ''}`, schema);
    }
    case 'object': {
      const properties = schema.properties as Record<string, unknown> | undefined;
      if (properties && Object.keys(properties).length > 0) return withNotes(`an object with the fields ${Object.keys(properties).join(', ')}`, schema);
      const patterned = schema.patternProperties as Record<string, SchemaNode> | undefined;
      const valueSchema = patterned ? Object.values(patterned)[0] : undefined;
      return withNotes(valueSchema ? `an object whose values are each ${expectation(valueSchema)}` : 'an object', schema);
    }
    case 'null':
      return 'null';
    default:
      return withNotes('a valid value', schema);
  }
}

function kindOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : 'a number';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** One sentence naming the field, what it must be, and (where it helps) what was sent. */
export function describeFault(fault: SchemaFault, field = fault.param || 'the body'): string {
  switch (fault.kind) {
    case 'required':
      return `${field} is required: ${expectation(fault.schema)}`;
    case 'unknown_field': {
      const known = fault.known && fault.known.length > 0 ? `; accepted here: ${fault.known.join(', ')}` : '; no fields are accepted here';
      return `${field} is not accepted here (unknown field)${known}`;
    }
    case 'type': {
      const wanted = expectation(fault.schema);
      const sent = fault.value === undefined ? '' : `, not ${kindOfValue(fault.value)}`;
      // The mistake every new client makes with amounts: 12.5 instead of "12.5".
      const quoted = fault.schema?.type === 'string' && typeof fault.value === 'number' ? `: send it quoted, "${String(fault.value)}"` : '';
      return `${field} must be ${wanted}${sent}${quoted}`;
    }
    case 'allowed_values': {
      const sent = fault.value === undefined ? '' : ` (got ${JSON.stringify(fault.value)})`;
      return `${field} must be ${expectation(fault.schema)}${sent}`;
    }
    case 'key':
      return `${field} has the key ${JSON.stringify(fault.value)}; its keys must each be ${expectation(fault.schema ? { type: 'string', ...fault.schema } : undefined)}`;
    case 'properties':
      return `${field} must be ${expectation(fault.schema)}`;
    case 'pattern':
    case 'format':
    case 'length':
    case 'range':
    case 'items':
      return `${field} must be ${expectation(fault.schema)}`;
    default:
      return `${field}: ${fault.fallback ?? `must be ${expectation(fault.schema)}`}`;
  }
}
