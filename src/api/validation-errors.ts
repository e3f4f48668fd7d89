import type { FastifySchemaValidationError } from 'fastify';
import { describeFault, paramOf, paramOfPointer, type FaultKind, type SchemaFault, type SchemaNode } from '../schema-messages.js';
import { amountFault, quoteAmount } from '../money/index.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './limits.js';
import { AmountString } from './schemas.js';

/** ajv's error object with `verbose: true` (app.ts): the failing schema and value ride along. */
interface AjvError extends FastifySchemaValidationError {
  parentSchema?: SchemaNode;
  data?: unknown;
}

export interface ValidationFailure {
  code: string;
  message: string;
  param: string;
}

/** Body fields whose failures have their own code (CONTRACT: a malformed amount is `invalid_amount`). */
const FIELD_CODES: [param: string, code: string][] = [
  ['amount', 'invalid_amount'],
  ['unit_prices', 'invalid_amount'],
  ['limits', 'invalid_usage'],
];

function codeOf(context: string, param: string, kind: FaultKind): string {
  if (context === 'headers' && param === 'idempotency-key') return kind === 'required' ? 'idempotency_key_required' : 'invalid_idempotency_key';
  if (context !== 'body') return 'invalid_request';
  const own = FIELD_CODES.find(([field]) => param.startsWith(`${field}.`) || param === field);
  // A missing field is missing, whatever it is: only a malformed amount is invalid_amount.
  return own && (kind !== 'required' || own[0] !== param) ? own[1] : 'invalid_request';
}

const KIND_OF_KEYWORD: Record<string, FaultKind> = {
  required: 'required',
  additionalProperties: 'unknown_field',
  type: 'type',
  const: 'allowed_values',
  enum: 'allowed_values',
  anyOf: 'allowed_values',
  pattern: 'pattern',
  format: 'format',
  minLength: 'length',
  maxLength: 'length',
  minimum: 'range',
  maximum: 'range',
  exclusiveMinimum: 'range',
  exclusiveMaximum: 'range',
  minItems: 'items',
  maxItems: 'items',
  minProperties: 'properties',
  maxProperties: 'properties',
  propertyNames: 'key',
};

/**
 * The error to describe. ajv lists a union's branch failures before the union's own
 * error: the union's is the one to explain ("one of …"), unless a branch got further
 * into the value (an object branch complaining about a field inside it).
 */
function chooseError(errors: AjvError[]): AjvError {
  const first = errors[0]!;
  const key = errors.find((e) => e.keyword === 'propertyNames');
  if (key) return key;
  const union = errors.find((e) => e.keyword === 'anyOf' && first.instancePath.startsWith(e.instancePath));
  if (!union) return first;
  const deeper = errors.find((e) => e !== union && e.instancePath.length > union.instancePath.length);
  return deeper ?? union;
}

function unknownFieldOf(error: AjvError): string | null {
  const data = error.data;
  if (error.parentSchema?.additionalProperties !== false || data === null || typeof data !== 'object' || Array.isArray(data)) return null;
  const properties = (error.parentSchema.properties ?? {}) as Record<string, unknown>;
  return Object.keys(data).find((key) => !Object.hasOwn(properties, key)) ?? null;
}

function faultOf(error: AjvError): SchemaFault {
  const kind = KIND_OF_KEYWORD[error.keyword] ?? 'other';
  const base = paramOfPointer(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const properties = (error.parentSchema?.properties ?? {}) as Record<string, SchemaNode>;
  if (kind === 'required') {
    // ajv checks required fields before unknown ones, but `{"nme": …}` is a misspelling:
    // naming the unknown field (and the accepted ones) says what to fix.
    const extra = unknownFieldOf(error);
    if (extra !== null) return { kind: 'unknown_field', param: paramOf([...(base ? [base] : []), extra]), known: Object.keys(properties) };
    const missing = String(params.missingProperty);
    return { kind, param: paramOf([...(base ? [base] : []), missing]), schema: properties[missing] };
  }
  if (kind === 'key') {
    return { kind, param: base, schema: error.parentSchema?.propertyNames as SchemaNode | undefined, value: params.propertyName };
  }
  if (kind === 'unknown_field') {
    const extra = String(params.additionalProperty);
    return { kind, param: paramOf([...(base ? [base] : []), extra]), known: Object.keys(properties) };
  }
  return { kind, param: base, schema: error.parentSchema, value: error.data, fallback: error.message };
}

/**
 * An amount the schema's pattern refused, in money's own words: the pattern cannot say
 * whether "99999999999999999999" has too many digits or too many decimals, and its
 * description ("at most 6 decimals") would name the wrong fault. Null for anything else.
 */
function amountMessage(fault: SchemaFault, field: string): string | null {
  if (fault.kind !== 'pattern' || fault.schema?.pattern !== AmountString.pattern || typeof fault.value !== 'string') return null;
  // The pattern takes zero and no sign: what it refused is judged by the same rules.
  const why = amountFault(fault.value, { allowZero: true });
  return why === null ? null : `${field} ${quoteAmount(fault.value)} ${why}`;
}

/** A request refused by its route's schema, as {code, message, param}. */
export function validationFailure(errors: FastifySchemaValidationError[], context: string): ValidationFailure {
  const fault = faultOf(chooseError(errors as AjvError[]));
  const code = codeOf(context, fault.param, fault.kind);
  if (code === 'idempotency_key_required') {
    return { code, param: 'Idempotency-Key', message: `this call requires an Idempotency-Key header (any unique string up to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters)` };
  }
  const subject = (<Record<string, string>>{ headers: `the ${fault.param} header`, querystring: `the query parameter ${fault.param}`, params: `the path parameter ${fault.param}` })[context];
  return { code, param: fault.param, message: amountMessage(fault, subject ?? fault.param) ?? describeFault(fault, subject) };
}
