import type { FastifyInstance } from 'fastify';

type Node = Record<string, unknown>;

/**
 * Unknown request fields are refused (400), never silently dropped: a misspelt
 * `refernce` must not vanish. Every object in a route's body and query schema is closed
 * (`additionalProperties: false`) unless it says otherwise: free-form objects declare
 * `additionalProperties` themselves (a `metadata` map, a pasted JWKS). Done once here, at
 * route registration, so a route added tomorrow is closed too; the OpenAPI document shows
 * the same closed schemas the server enforces.
 */
export function closeRequestSchemas(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { body?: unknown; querystring?: unknown } | undefined;
    if (schema?.body) close(schema.body);
    if (schema?.querystring) close(schema.querystring);
  });
}

/** A deep copy of a schema with every object closed the same way (response-check.ts checks answers with it). */
export function closedCopy<T>(schema: T): T {
  const copy = structuredClone(schema);
  close(copy);
  return copy;
}

function close(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    node.forEach(close);
    return;
  }
  const schema = node as Node;
  if (schema.type === 'object' && schema.properties && !('additionalProperties' in schema) && !schema.patternProperties) {
    schema.additionalProperties = false;
  }
  for (const key of ['properties', 'patternProperties'] as const) {
    const children = schema[key] as Record<string, unknown> | undefined;
    if (children) Object.values(children).forEach(close);
  }
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf'] as const) close(schema[key]);
}
