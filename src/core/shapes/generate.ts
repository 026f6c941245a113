import { compile } from 'json-schema-to-typescript';
import { jsonSchemaToZod } from 'json-schema-to-zod';
import { format } from 'prettier';
import { pascalName, type GeneratedTypes } from '../../shared/shapes.js';
import { typesOf, type FieldStats, type JsonType, type Shape } from './infer.js';

/**
 * Handler types from real payloads (DESIGN §16): a shape becomes a JSON Schema here, and kept
 * libraries turn that into TypeScript (json-schema-to-typescript) and a zod schema
 * (json-schema-to-zod, formatted by prettier) — no code generator of our own. A field present in
 * every object that could hold it is required, else optional; several types seen make a union;
 * nested objects are named after their path (`GithubPushRepositoryOwner`).
 *
 * Objects whose members are not all known (the 2,000-path bound, deeper than 16 levels, a member
 * named `__proto__` — which an object literal in generated code would turn into a prototype)
 * allow any other member, so every stored event still satisfies the types.
 */

type JsonSchema = Record<string, unknown>;

export function shapeToJsonSchema(shape: Shape, root: string): JsonSchema {
  const children = new Map<string, FieldStats[]>();
  for (const field of shape.fields.values()) {
    if (field.parent === null) continue;
    const list = children.get(field.parent) ?? [];
    list.push(field);
    children.set(field.parent, list);
  }
  const schemaOf = (field: FieldStats | undefined, name: string): JsonSchema => {
    if (!field) return {};
    const variants = typesOf(field).map((type) => variant(field, type, name));
    const schema: JsonSchema = variants.length === 1 ? variants[0]! : variants.length === 0 ? {} : { anyOf: variants };
    return schema;
  };
  const variant = (field: FieldStats, type: JsonType, name: string): JsonSchema => {
    if (type === 'array') {
      const items = field.deep ? undefined : shape.fields.get(`${field.path}[]`);
      return { type: 'array', items: schemaOf(items, `${name}Item`) };
    }
    if (type !== 'object') return { type };
    const properties: JsonSchema = {};
    const required: string[] = [];
    let open = field.deep === true || shape.truncated;
    for (const child of children.get(field.path) ?? []) {
      if (child.key === null) continue;
      if (child.key === '__proto__') {
        open = true;
        continue;
      }
      Object.defineProperty(properties, child.key, { value: schemaOf(child, pascalName(name, child.key)), enumerable: true, writable: true, configurable: true });
      if (child.occurrences >= field.objects) required.push(child.key);
    }
    return {
      type: 'object',
      title: name,
      properties,
      ...(required.length > 0 ? { required } : {}),
      ...(open ? { additionalProperties: true } : {}),
    };
  };
  const schema = schemaOf(shape.fields.get(''), root);
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...schema, title: root };
}

/** The root type's name: `github` + `push` → `GithubPush`. */
export const rootTypeName = (provider: string, eventType: string) => pascalName(provider, eventType);

/** Stands for the number of events in a generated banner, so the text can be kept while only the count moves. */
export const EVENTS_SEEN_MARK = '\u0000events_seen\u0000';

/**
 * The types of one JSON Schema (shapeToJsonSchema's), the TypeScript banner saying
 * EVENTS_SEEN_MARK where the count goes: what the schema does not change, nor does this.
 */
export async function generateFromSchema(jsonSchema: JsonSchema, provider: string, eventType: string): Promise<GeneratedTypes> {
  const root = rootTypeName(provider, eventType);
  const typescript = await compile(structuredClone(jsonSchema) as never, root, {
    bannerComment: `/** ${provider} ${eventType}: inferred by switchboard from ${EVENTS_SEEN_MARK} stored events. */`,
    additionalProperties: false,
    format: true,
    strictIndexSignatures: false,
  });
  const zodSource = jsonSchemaToZod(structuredClone(jsonSchema) as never, { name: `${root}Schema`, module: 'esm' });
  const zod = await format(zodSource.replace(/^import \{ z \} from "zod"/, "import { z } from 'zod'"), { parser: 'typescript', singleQuote: true });
  return { root, typescript, zod, json_schema: jsonSchema };
}
