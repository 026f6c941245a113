import { useEffect, useState } from 'react';
import { useAppData } from '../app-data';
import { CopyField } from '../components/copy-button';

/** Sessions come and go without a live message: the screen asks again this often while shown. */
const SESSIONS_POLL_MS = 3000;

/** Connect an agent: the MCP URL, the exact Claude Code command, a .mcp.json snippet. */
export function ConnectScreen() {
  const { client, info, loadError } = useAppData();
  const [polled, setPolled] = useState<number | null | undefined>(undefined);
  useEffect(() => {
    let shown = true;
    const poll = () =>
      client.getServerInfo({}).then(
        (next) => shown && setPolled(next.mcp_sessions),
        () => undefined,
      );
    const timer = setInterval(poll, SESSIONS_POLL_MS);
    void poll();
    return () => {
      shown = false;
      clearInterval(timer);
    };
  }, [client]);
  const sessions = polled === undefined ? (info?.mcp_sessions ?? null) : polled;
  return (
    <div className="page connect-screen">
      <header className="page-header">
        <h1>Connect</h1>
      </header>
      {loadError && (
        <p role="alert" className="error-banner">
          {loadError}
        </p>
      )}
      {info && (
        <>
          <p className="lead">
            switchboard is an MCP server: Claude Code and other agents can list, read, wait for and replay your webhooks. It listens on loopback only and
            needs the control token below — treat it like a password.
          </p>
          <section className="connect-card" aria-labelledby="claude-heading">
            <h2 id="claude-heading">Claude Code</h2>
            <p>Run once in a terminal:</p>
            <CopyField label="Claude Code command" value={info.claude_command} />
          </section>
          <section className="connect-card" aria-labelledby="mcp-json-heading">
            <h2 id="mcp-json-heading">Any MCP client</h2>
            <CopyField label="MCP URL" value={info.mcp_url} />
            <p>
              Or commit-free, per project: put this in <code>.mcp.json</code> (keep the file out of git, it holds the token):
            </p>
            <CopyField label=".mcp.json snippet" value={info.mcp_json} multiline />
          </section>
          <section className="connect-card" aria-labelledby="sessions-heading">
            <h2 id="sessions-heading">Sessions</h2>
            <p role="status">
              {sessions === null
                ? 'This build does not report connected sessions.'
                : sessions === 0
                  ? 'No agent is connected right now.'
                  : `${sessions} agent session${sessions === 1 ? '' : 's'} connected.`}
            </p>
            <p className="muted small">
              {info.mcp_tools.length} tools: {info.mcp_tools.join(', ')}. switchboard {info.version}.
            </p>
          </section>
        </>
      )}
    </div>
  );
}
