import type { Switchboard } from '../core/switchboard.js';
import { claudeCommand } from '../shared/connect.js';

export function banner(switchboard: Switchboard): string {
  const { config, url, token } = switchboard;
  const lines = [`switchboard ${switchboard.version} is receiving`, ''];
  const webhooks = switchboard.providers.statuses().filter((provider) => provider.family === 'webhook');
  const queues = switchboard.providers.statuses().filter((provider) => provider.family === 'queue');
  if (webhooks.length === 0 && queues.length === 0) {
    lines.push(
      '  No providers yet. Add one to ' + switchboard.configPath + ', for example:',
      '    { "providers": [{ "name": "github", "kind": "github", "secrets": [{ "env": "GITHUB_WEBHOOK_SECRET" }] }] }',
      '  or on the Providers screen of the web UI.',
    );
  }
  for (const provider of webhooks) {
    const local = `${url.receiver}${provider.path}`;
    const state = !provider.enabled ? 'disabled' : provider.secret_status === 'missing' ? 'SECRET MISSING' : provider.trust_mode;
    lines.push(`  ${provider.name.padEnd(14)} ${local}  (${state})`);
    if (config.receiver.public_url) lines.push(`  ${''.padEnd(14)} ${new URL(provider.path!, config.receiver.public_url).toString()}`);
  }
  for (const provider of queues) lines.push(`  ${provider.name.padEnd(14)} ${provider.kind} ${provider.channel}`);
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
