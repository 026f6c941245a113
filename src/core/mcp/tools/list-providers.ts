import { z } from 'zod';
import { ProviderStatusSchema } from '../../../shared/providers.js';
import type { McpDeps } from '../deps.js';
import { scrubSecrets } from '../scrub.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const ListProvidersInputSchema = z.strictObject({});

export const ListProvidersOutputSchema = z.strictObject({
  providers: z.array(ProviderStatusSchema).describe('every configured provider, in config.json order'),
});

export const LIST_PROVIDERS_TOOL: ToolSpec<typeof ListProvidersInputSchema, typeof ListProvidersOutputSchema> = {
  name: 'list_providers',
  title: 'List providers',
  description:
    'See what switchboard receives: each configured webhook or queue provider, how it is trusted (trust_mode), whether ' +
    'its secret is set (never the secret), its receive path or channel, and its live status with the last error.',
  inputSchema: ListProvidersInputSchema,
  outputSchema: ListProvidersOutputSchema,
  annotations: { title: 'List providers', readOnlyHint: true, openWorldHint: false },
  example: {
    arguments: {},
    result: {
      providers: [
        {
          name: 'github',
          kind: 'github',
          family: 'webhook',
          trust_mode: 'signed',
          enabled: true,
          secret_status: 'configured',
          path: '/webhooks/github',
          status: 'listening',
        },
        {
          name: 'jobs',
          kind: 'redis-stream',
          family: 'queue',
          trust_mode: 'queue',
          enabled: true,
          secret_status: 'configured',
          channel: 'jobs',
          status: 'error',
          last_error: 'connect ECONNREFUSED 127.0.0.1:6379',
        },
      ],
    },
  },
};

export function registerListProvidersTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(LIST_PROVIDERS_TOOL, async () => {
    const secrets = deps.providers.allSecrets();
    return {
      providers: deps.providers.statuses().map((provider) =>
        // last_error is a driver's text (e.g. a Redis URL in an error); scrub it like any message.
        provider.last_error === undefined ? provider : { ...provider, last_error: scrubSecrets(provider.last_error, secrets) },
      ),
    };
  });
}
