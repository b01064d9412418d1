// Parameters of an exposed function: a zod schema (sent as JSON Schema,
// validated with zod) or a JSON Schema object (validated via z.fromJSONSchema
// when it can be converted; otherwise passed through unchecked).
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;
export type Parameters = z.ZodType | JsonSchema;

export interface PreparedParameters {
  jsonSchema: JsonSchema;
  validate(args: unknown): { ok: true; value: unknown } | { ok: false; message: string };
}

const isZod = (p: unknown): p is z.ZodType => p instanceof z.ZodType || (!!p && typeof p === 'object' && '_zod' in p && 'safeParse' in p);

const describe = (error: z.ZodError) => error.issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '(args)'}: ${i.message}`).join('; ');

export function prepareParameters(parameters: Parameters | undefined): PreparedParameters {
  if (parameters === undefined) {
    return { jsonSchema: { type: 'object', properties: {} }, validate: (args) => ({ ok: true, value: args ?? {} }) };
  }
  let schema: z.ZodType | undefined;
  let jsonSchema: JsonSchema;
  if (isZod(parameters)) {
    schema = parameters;
    const { $schema: _drop, ...rest } = z.toJSONSchema(parameters, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    jsonSchema = rest;
  } else {
    jsonSchema = parameters;
    try {
      schema = z.fromJSONSchema(parameters as never);
    } catch {
      schema = undefined; // a schema zod cannot read: the handler checks its own args
    }
  }
  return {
    jsonSchema,
    validate(args) {
      if (!schema) return { ok: true, value: args };
      const r = schema.safeParse(args ?? {});
      return r.success ? { ok: true, value: r.data } : { ok: false, message: describe(r.error) };
    },
  };
}
