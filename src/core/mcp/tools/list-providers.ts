import { z } from 'zod';
import { ProviderStatusSchema } from '../../../shared/providers.js';
import { forwardTargets } from '../../replay/forward-targets.js';
import type { McpDeps } from '../deps.js';
import { scrubSecrets } from '../scrub.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const ListProvidersInputSchema = z.strictObject({});

/** ProviderStatus plus where its events arrive and where they are forwarded (DESIGN §6). */
export const McpProviderStatusSchema = ProviderStatusSchema.extend({
  receive_url: z.string().optional().describe('the local URL webhook deliveries are POSTed to (a tunnel points here)'),
  forward_targets: z.array(z.string()).describe("forward rules' URLs; the first is also where replays go by default"),
  // How many answer rules decide what this provider is answered (DESIGN §15).
  answer_rules: z.number(),
}).strict();

export const ListProvidersOutputSchema = z.strictObject({
  providers: z.array(McpProviderStatusSchema).describe('every configured provider, in config.json order'),
});

export const LIST_PROVIDERS_TOOL: ToolSpec<typeof ListProvidersInputSchema, typeof ListProvidersOutputSchema> = {
  name: 'list_providers',
  title: 'List providers',
  description:
    'Each webhook or queue provider: trust_mode, whether its secret is set (never the secret), ' +
    'receive URL or channel, forward targets, answer rules, live status and last error.',
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
          receive_url: 'http://127.0.0.1:7777/webhooks/github',
          forward_targets: ['http://localhost:3000/webhooks/github'],
          answer_rules: 1,
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
          forward_targets: [],
          answer_rules: 0,
        },
      ],
    },
  },
};

export function registerListProvidersTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(LIST_PROVIDERS_TOOL, async () => {
    const secrets = deps.providers.allSecrets();
    const receiver = deps.receiverUrl();
    return {
      providers: deps.providers.statuses().map((provider) => {
        const config = deps.providers.config(provider.name);
        return {
          ...provider,
          // last_error is a driver's text (e.g. a Redis URL in an error); scrub it like any message.
          ...(provider.last_error === undefined ? {} : { last_error: scrubSecrets(provider.last_error, secrets) }),
          ...(provider.path === undefined ? {} : { receive_url: `${receiver}${provider.path}` }),
          forward_targets: forwardTargets(config),
          answer_rules: config && 'answer' in config ? (config.answer?.length ?? 0) : 0,
        };
      }),
    };
  });
}
