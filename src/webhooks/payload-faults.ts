import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { allowedValues, describeFault, paramOfPointer, type FaultKind, type SchemaNode } from '../schema-messages.js';

/** TypeBox's error kinds, in the words of schema-messages (the API's ajv errors use the same). */
function kindOf(error: ValueError): FaultKind {
  switch (error.type) {
    case ValueErrorType.Union:
    case ValueErrorType.Literal:
      return allowedValues(error.schema as SchemaNode) ? 'allowed_values' : 'type';
    case ValueErrorType.ObjectRequiredProperty:
      return 'required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'unknown_field';
    case ValueErrorType.StringMinLength:
    case ValueErrorType.StringMaxLength:
      return 'length';
    case ValueErrorType.StringPattern:
      return 'pattern';
    case ValueErrorType.StringFormat:
      return 'format';
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.IntegerExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMaximum:
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.NumberMaximum:
      return 'range';
    case ValueErrorType.String:
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
    case ValueErrorType.Boolean:
    case ValueErrorType.Object:
    case ValueErrorType.Array:
    case ValueErrorType.Null:
      return 'type';
    default:
      return 'other';
  }
}

/**
 * A webhook body that does not match its provider's format, in a sentence naming the
 * field and what it must be ("type must be one of "job.started", … (got "job.done")"),
 * instead of TypeBox's "Expected union value".
 */
export function describePayloadError(error: ValueError): string {
  const kind = kindOf(error);
  return describeFault({
    kind,
    // TypeBox points a missing property's error at the property itself, with its schema.
    param: paramOfPointer(error.path),
    schema: error.schema as SchemaNode,
    ...(kind === 'required' ? {} : { value: error.value }),
    fallback: error.message,
  });
}
