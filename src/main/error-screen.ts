import { isSwitchboardError } from '../core/errors.js';

/**
 * What the window shows when the core cannot start (port in use, bad config, database locked
 * or unreachable, data dir not writable): the problem and the fix, never a blank window or a
 * bare stack trace. Static HTML with no script; served by app-protocol.ts under the same CSP.
 */

export interface StartupFailure {
  code: string;
  message: string;
  hint?: string;
}

export function describeStartupFailure(error: unknown, logPath: string): StartupFailure {
  if (isSwitchboardError(error)) {
    return { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  }
  return {
    code: 'internal',
    message: `switchboard failed to start: ${error instanceof Error ? error.message : String(error)}`,
    hint: `the log has the details: ${logPath}`,
  };
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const TITLES: Record<string, string> = {
  port_in_use: 'A port switchboard needs is already in use',
  config_invalid: 'The configuration has a problem',
  database_unavailable: 'The database cannot be opened',
  storage_unavailable: 'The database cannot be opened',
  data_dir_unwritable: 'The data folder is not writable',
};

export function startupErrorHtml(failure: StartupFailure, configPath: string): string {
  const title = TITLES[failure.code] ?? 'switchboard could not start';
  const hint = failure.hint ? `<h2>How to fix it</h2><p class="hint">${escapeHtml(failure.hint)}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>switchboard — ${escapeHtml(title)}</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; padding: 48px; color: #1f2328; background: #fff; }
  @media (prefers-color-scheme: dark) { body { color: #e6edf3; background: #0d1117; } code, .message { background: #161b22; } }
  h1 { font-size: 22px; margin: 0 0 16px; }
  h2 { font-size: 15px; margin: 24px 0 4px; }
  .message { font-family: ui-monospace, monospace; white-space: pre-wrap; background: #f6f8fa; padding: 12px; border-radius: 6px; }
  .code, .footer { color: #8b949e; font-size: 13px; }
  code { font-family: ui-monospace, monospace; background: #f6f8fa; padding: 1px 4px; border-radius: 4px; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="message">${escapeHtml(failure.message)}</p>
${hint}
<p class="code">error code: ${escapeHtml(failure.code)}</p>
<p class="footer">The configuration file is <code>${escapeHtml(configPath)}</code>. After fixing the problem, quit switchboard (close this window) and start it again.</p>
</body>
</html>
`;
}
