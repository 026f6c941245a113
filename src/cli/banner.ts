import type { Services } from '../core/services.js';
import { claudeCommand } from '../shared/connect.js';

export function banner(switchboard: Services): string {
  const { config, url, token } = switchboard;
  const lines = [`switchboard ${switchboard.version} is receiving`, ''];
  const webhooks = switchboard.providers.statuses().filter((provider) => provider.family === 'webhook');
  const queues = switchboard.providers.statuses().filter((provider) => provider.family === 'queue');
  if (webhooks.length === 0 && queues.length === 0) {
    lines.push(
      '  No providers yet. Add one to ' + switchboard.configPath + ' (applied as soon as you save it), for example:',
      '    { "providers": [{ "name": "github", "kind": "github", "secrets": [{ "env": "GITHUB_WEBHOOK_SECRET" }] }] }',
      '  or on the Providers screen of the web UI.',
    );
  }
  const indent = `  ${''.padEnd(14)} `;
  for (const provider of webhooks) {
    const local = `${url.receiver}${provider.path}`;
    const missing = provider.enabled && provider.secret_status === 'missing';
    const state = !provider.enabled ? 'disabled' : missing ? 'SECRET MISSING: deliveries get 503' : provider.trust_mode;
    lines.push(`  ${provider.name.padEnd(14)} ${local}  (${state})`);
    if (config.receiver.public_url) lines.push(`${indent}${new URL(provider.path!, config.receiver.public_url).toString()}`);
    if (missing) lines.push(`${indent}fix: ${switchboard.providers.webhook(provider.name)?.secretAdvice ?? 'configure a secret'}`);
  }
  for (const provider of queues) {
    lines.push(`  ${provider.name.padEnd(14)} ${provider.kind} ${provider.channel}${provider.enabled && provider.secret_status === 'missing' ? '  (REDIS URL MISSING)' : ''}`);
    const source = switchboard.providers.config(provider.name);
    if (provider.enabled && provider.secret_status === 'missing' && source && 'url' in source) {
      lines.push(`${indent}fix: ${switchboard.providers.missingSecretAdvice([source.url], 'URL')}`);
    }
  }
  lines.push(
    '',
    `  receiver   ${url.receiver}   (point your tunnel here: ngrok http ${new URL(url.receiver).port})`,
    `  web UI     ${url.ui}`,
    `  MCP        ${url.mcp}`,
    '',
    '  Connect Claude Code:',
    `    ${claudeCommand(url.mcp, token)}`,
    '',
    `  data       ${switchboard.options.dataDir} (${switchboard.store.databaseKind === 'pglite' ? 'embedded PGlite' : 'PostgreSQL'})`,
    '',
  );
  return `${lines.join('\n')}\n`;
}
