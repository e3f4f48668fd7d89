/**
 * The one place where PostgreSQL SQLSTATEs become error classes. Callers branch on
 * the class and, for constraint violations, on the *constraint name*: a unique
 * violation is an idempotent outcome only on the constraint the caller intended.
 */

/** SQLSTATEs we act on, by name (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
export const SQLSTATE = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  notNullViolation: '23502',
  exclusionViolation: '23P01',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  queryCanceled: '57014', // statement_timeout, or pg_cancel_backend
  adminShutdown: '57P01', // pg_terminate_backend, server shutting down
  crashShutdown: '57P02',
  cannotConnectNow: '57P03', // starting up or shutting down
  readOnlyTransaction: '25006', // a write on a standby, or with default_transaction_read_only on
  appendOnlyViolation: 'TL001', // raised by our triggers on immutable tables
  characterNotInRepertoire: '22021', // e.g. a NUL character in text
  untranslatableCharacter: '22P05',
  invalidTextRepresentation: '22P02', // e.g. JSON text holding a lone UTF-16 surrogate
  numericValueOutOfRange: '22003', // a value beyond its column's type (bigint, integer)
} as const;

interface PgErrorFields {
  code?: string;
  constraint?: string;
  table?: string;
  detail?: string;
}

export class DatabaseError extends Error {
  readonly sqlstate: string | undefined;
  readonly constraint: string | undefined;
  readonly table: string | undefined;
  constructor(message: string, options: { cause?: unknown; fields?: PgErrorFields } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.sqlstate = options.fields?.code;
    this.constraint = options.fields?.constraint;
    this.table = options.fields?.table;
  }
}

/** A constraint refused the write; `constraint` says which. */
export class IntegrityConstraintViolation extends DatabaseError {}
export class UniqueViolation extends IntegrityConstraintViolation {}
export class ForeignKeyViolation extends IntegrityConstraintViolation {}
export class CheckViolation extends IntegrityConstraintViolation {}
export class NotNullViolation extends IntegrityConstraintViolation {}
/** An UPDATE or DELETE on an append-only table (ledger entries, settlements, prices). */
export class AppendOnlyViolation extends IntegrityConstraintViolation {}

/** Retrying the whole transaction may succeed. */
export class TransactionRollbackError extends DatabaseError {}
export class SerializationFailure extends TransactionRollbackError {}
export class DeadlockDetected extends TransactionRollbackError {}

export class StatementTimeout extends DatabaseError {}

/** Text PostgreSQL cannot store (a NUL character): the client's input is at fault. */
export class InvalidText extends DatabaseError {}

/** A value beyond its column's type: a backstop behind the range checks on amounts. */
export class NumericOutOfRange extends DatabaseError {}

/**
 * The connection broke. If it broke while COMMIT was in flight the outcome is unknown:
 * the caller must read its effect back before writing again.
 */
export class ConnectionLost extends DatabaseError {}

/**
 * The server refused a write as read-only (25006): the connection reached a standby or a
 * primary being demoted. Nothing was written, but it is handled as a lost connection —
 * read back, retry on a new connection, which looks for the primary (host-selection.ts).
 */
export class ServerReadOnly extends ConnectionLost {}

const CONNECTION_ERROR_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH']);

export function mapDatabaseError(error: unknown): unknown {
  if (error instanceof DatabaseError) return error;
  if (!(error instanceof Error)) return error;
  const fields = error as Error & PgErrorFields;
  const message = fields.constraint ? `${error.message} (constraint ${fields.constraint})` : error.message;
  const options = { cause: error, fields };
  switch (fields.code) {
    case SQLSTATE.uniqueViolation:
      return new UniqueViolation(message, options);
    case SQLSTATE.foreignKeyViolation:
      return new ForeignKeyViolation(message, options);
    case SQLSTATE.checkViolation:
      return new CheckViolation(message, options);
    case SQLSTATE.notNullViolation:
      return new NotNullViolation(message, options);
    case SQLSTATE.appendOnlyViolation:
      return new AppendOnlyViolation(message, options);
    case SQLSTATE.serializationFailure:
      return new SerializationFailure(message, options);
    case SQLSTATE.deadlockDetected:
      return new DeadlockDetected(message, options);
    case SQLSTATE.characterNotInRepertoire:
    case SQLSTATE.untranslatableCharacter:
      return new InvalidText(message, options);
    case SQLSTATE.invalidTextRepresentation:
      // Only JSON input is text a client sent us; any other type's is our bug.
      if (/type json/.test(error.message)) return new InvalidText(message, options);
      break;
    case SQLSTATE.numericValueOutOfRange:
      return new NumericOutOfRange(message, options);
    case SQLSTATE.queryCanceled:
      return new StatementTimeout(message, options);
    case SQLSTATE.adminShutdown:
    case SQLSTATE.crashShutdown:
    case SQLSTATE.cannotConnectNow:
      return new ConnectionLost(message, options);
    case SQLSTATE.readOnlyTransaction:
      return new ServerReadOnly(message, options);
  }
  if (
    (fields.code && CONNECTION_ERROR_CODES.has(fields.code)) ||
    /Connection terminated|connection is closed|Client has encountered a connection error|Connection ended|Query read timeout/i.test(error.message)
  ) {
    return new ConnectionLost(error.message, options);
  }
  if (fields.code && /^[0-9A-Z]{5}$/.test(fields.code)) return new DatabaseError(message, options);
  return error;
}

/** Accepts a raw driver error too: callers inside a transaction see it unmapped. */
export function isUniqueViolationOn(error: unknown, constraint: string): boolean {
  const mapped = mapDatabaseError(error);
  return mapped instanceof UniqueViolation && mapped.constraint === constraint;
}
