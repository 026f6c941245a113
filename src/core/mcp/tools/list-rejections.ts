import { z } from 'zod';
import { CursorInputSchema, inputText, MAX_NAME_CHARS } from '../../../shared/input.js';
import type { McpDeps } from '../deps.js';
import { fitPage } from '../page-budget.js';
import { checkProviderFilter } from '../provider-filter.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const MAX_REJECTIONS_LIMIT = 100;
export const DEFAULT_REJECTIONS_LIMIT = 20;

export const ListRejectionsInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).optional().describe('only refusals for this provider'),
  limit: z.number().int().min(1).max(MAX_REJECTIONS_LIMIT).default(DEFAULT_REJECTIONS_LIMIT).describe(`page size, 1–${MAX_REJECTIONS_LIMIT}`),
  cursor: CursorInputSchema.optional().describe('next_cursor of the previous page, unchanged'),
});

/** A rejection without its request headers: the diagnosis is in reason and hint. */
export const RejectionSummarySchema = z.strictObject({
  id: z.number().int().positive(),
  provider: z.string(),
  reason: z.string().describe('stable code, e.g. signature_mismatch, timestamp_out_of_tolerance, secret_not_configured'),
  hint: z.string().nullable().describe('the likely cause and what to do, in words'),
  body_size: z.number().int().nonnegative().describe('bytes of the refused body (the body itself is not kept)'),
  body_sha256: z.string().describe('hex SHA-256 of the refused body, to match it with what the sender logged'),
  source_ip: z.string().nullable(),
  received_at: z.string().describe('ISO-8601 UTC time'),
});

export const ListRejectionsOutputSchema = z.strictObject({
  rejections: z.array(RejectionSummarySchema).describe('newest first'),
  next_cursor: z.string().optional().describe('present only when more rejections match'),
});

export const LIST_REJECTIONS_TOOL: ToolSpec<typeof ListRejectionsInputSchema, typeof ListRejectionsOutputSchema> = {
  name: 'list_rejections',
  title: 'List rejected deliveries',
  description:
    'Why a webhook did not arrive: deliveries switchboard refused (bad or missing signature, stale timestamp, ' +
    'wrong token, no secret), newest first, each with a reason code and a hint saying what to fix.',
  inputSchema: ListRejectionsInputSchema,
  outputSchema: ListRejectionsOutputSchema,
  annotations: { title: 'List rejected deliveries', readOnlyHint: true, openWorldHint: false },
  example: {
    arguments: { provider: 'github', limit: 1 },
    result: {
      rejections: [
        {
          id: 31,
          provider: 'github',
          reason: 'signature_mismatch',
          hint:
            "X-Hub-Signature-256 does not match the configured secret: the secret in switchboard is probably not the one set at the sender (copy it again from the provider's webhook settings) (the secret is set per webhook under the repository's or organization's Settings → Webhooks)",
          body_size: 7410,
          body_sha256: '3f0a4c1e9b2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f',
          source_ip: '140.82.115.4',
          received_at: '2026-11-30T09:40:02.511034Z',
        },
      ],
      next_cursor: 'WyIyMDI2LTExLTMwVDA5OjQwOjAyLjUxMTAzNFoiLDMxXQ',
    },
  },
};

export function registerListRejectionsTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(LIST_REJECTIONS_TOOL, async ({ provider, limit, cursor }) => {
    await checkProviderFilter(deps, provider);
    const stored = await deps.store.listRejections({ provider, limit, cursor });
    // The request headers stay out: they can be large, and reason + hint carry the diagnosis.
    const page = fitPage({
      ...stored,
      items: stored.items.map(({ id, provider: name, reason, hint, body_size, body_sha256, source_ip, received_at }) => ({
        id,
        provider: name,
        reason,
        hint,
        body_size,
        body_sha256,
        source_ip,
        received_at,
      })),
    });
    return {
      rejections: page.items,
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  });
}
