import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { closedCopy } from './closed-schemas.js';
import { errorBody } from './errors.js';
import { ErrorResponse } from './schemas.js';

/** The header that says an answer was checked against its schema (the schema test counts them). */
export const RESPONSE_CHECKED_HEADER = 'tally-response-checked';

// ajv-formats is CommonJS with a default export; under NodeNext its namespace is what imports.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type ResponseSchemas = Record<string, unknown>;

/**
 * In tests, every JSON answer is checked against the schema its route declares for that
 * status, with every object closed: a field the schema does not list, a wrong type, a
 * null where none is allowed, or a status the route does not declare turns the answer
 * into a 500 `response_schema_violation` naming what is wrong, so the test that got it
 * fails. Production skips it (Fastify's serializer already follows the schemas; this
 * proves the schemas tell the truth). Enabled by buildApp's `checkResponses` or
 * TALLY_CHECK_RESPONSES=1.
 */
export function checkResponses(app: FastifyInstance): void {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(closedCopy(ErrorResponse), 'Error');
  const compiled = new WeakMap<object, ValidateFunction>();
  const validatorOf = (schema: object): ValidateFunction => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(closedCopy(schema));
      compiled.set(schema, validate);
    }
    return validate;
  };

  app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const responses = (request.routeOptions.schema as { response?: ResponseSchemas } | undefined)?.response;
    if (!responses) return payload;
    const status = reply.statusCode;
    const declared = (responses[String(status)] ?? responses[`${String(status)[0]}xx`] ?? responses.default) as object | undefined;
    // A status answered in several media types (`content`: JSON or CSV) has a schema per
    // type; a JSON body is checked against the JSON one (text bodies skip this hook).
    const content = (declared as { content?: Record<string, { schema: object }> } | undefined)?.content;
    const schema = content ? content['application/json']?.schema : declared;
    const route = `${request.method} ${request.routeOptions.url}`;
    let problem: string | null = null;
    if (!schema) {
      problem = `${route} answered ${status}, a status its schema does not declare (${Object.keys(responses).join(', ')})`;
    } else {
      // What the client will receive: dates as strings, undefined fields gone.
      const sent: unknown = JSON.parse(JSON.stringify(payload ?? null));
      const validate = validatorOf(schema);
      if (!validate(sent)) problem = `${route} answered ${status} with a body its schema does not allow: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`;
    }
    if (problem) {
      request.log.error({ route, status, payload }, problem);
      reply.code(500);
      return errorBody('response_schema_violation', problem);
    }
    reply.header(RESPONSE_CHECKED_HEADER, String(status));
    return payload;
  });
}
