/**
 * How an MCP client connects: the exact `claude mcp add` line and the `.mcp.json` entry. The
 * start banner, the API's server info and the docs all print these, so they live in one place.
 */
export function claudeCommand(mcpUrl: string, token: string): string {
  return `claude mcp add --transport http switchboard ${mcpUrl} --header "Authorization: Bearer ${token}"`;
}

export function mcpJsonSnippet(mcpUrl: string, token: string): string {
  const config = { mcpServers: { switchboard: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${token}` } } } };
  return JSON.stringify(config, null, 2);
}
