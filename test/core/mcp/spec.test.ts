import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { toolJsonSchemas } from '../../../src/core/mcp/tool.js';
import { TOOL_SPECS } from '../../../src/core/mcp/tools/catalog.js';
import { renderToolsSpec, SPEC_PATH } from './spec-doc.js';

describe('docs/openspec/specs/mcp-tools/spec.md', () => {
  it('is what the zod schemas generate (UPDATE_MCP_SPEC=1 rewrites it)', async () => {
    const generated = renderToolsSpec();
    if (process.env.UPDATE_MCP_SPEC === '1') {
      await mkdir(dirname(SPEC_PATH), { recursive: true });
      await writeFile(SPEC_PATH, generated);
    }
    const onDisk = await readFile(SPEC_PATH, 'utf8').catch(() => '');
    expect(onDisk, `${SPEC_PATH} is stale: run UPDATE_MCP_SPEC=1 npx vitest run test/core/mcp/spec.test.ts`).toBe(generated);
  });

  it('has examples that satisfy the schemas', () => {
    // Formats are not checked (ajv-formats is not ours to import); zod adds a pattern to the ones that matter.
    const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    for (const spec of TOOL_SPECS) {
      const schemas = toolJsonSchemas(spec);
      const input = ajv.compile(schemas.inputSchema);
      const output = ajv.compile(schemas.outputSchema);
      expect(input(spec.example.arguments), `${spec.name} example arguments: ${ajv.errorsText(input.errors)}`).toBe(true);
      expect(output(spec.example.result), `${spec.name} example result: ${ajv.errorsText(output.errors)}`).toBe(true);
      expect(spec.inputSchema.safeParse(spec.example.arguments).success).toBe(true);
    }
  });

  it('describes every input field and declares annotations', () => {
    for (const spec of TOOL_SPECS) {
      const { inputSchema } = toolJsonSchemas(spec);
      for (const [field, schema] of Object.entries(inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${spec.name}.${field}`).toEqual(expect.any(String));
      }
      expect(spec.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
      expect(spec.annotations.readOnlyHint === true || spec.annotations.openWorldHint === true, spec.name).toBe(true);
    }
  });
});
