import type { ProviderView } from '../../../shared/api';
import { useAppData } from '../app-data';
import { useNavigate } from '../navigation';
import { tryItCommand } from '../lib/try-it';
import { CopyField } from './copy-button';
import { SendTestEvent } from './send-test-event';

/** Empty states that teach: what to do next, with the exact line to paste. */

const EXAMPLE_CONFIG = `{
  "providers": [
    { "name": "github", "kind": "github",
      "secrets": [{ "env": "GITHUB_WEBHOOK_SECRET" }] }
  ]
}`;

export function NoProviders() {
  const navigate = useNavigate();
  const { settings } = useAppData();
  return (
    <div className="empty-state">
      <h2>No providers yet</h2>
      <p>
        A provider is one sender — GitHub, Stripe, Slack, a homelab script — with its own receive URL <code>/webhooks/&lt;name&gt;</code> and the
        secret switchboard verifies its deliveries with.
      </p>
      <button type="button" className="primary-button" onClick={() => navigate('providers', 'add-provider')}>
        Add a provider
      </button>
      <p className="muted">
        Or add it to <code>{settings?.config_path ?? 'config.json'}</code>; switchboard reloads the file when it changes:
      </p>
      <pre className="snippet">{EXAMPLE_CONFIG}</pre>
    </div>
  );
}

export function EmptyEvents({ providers }: { providers: ProviderView[] }) {
  const { settings } = useAppData();
  // Teach with the provider a plain curl can reach: open, then token, then a signed one.
  const rank = (view: ProviderView) => ['open', 'token', 'signed'].indexOf(view.status.trust_mode) + (view.status.enabled ? 0 : 10);
  const webhook = providers.filter((view) => view.receive_url).sort((a, b) => rank(a) - rank(b))[0];
  const enabled = providers.filter((view) => view.status.enabled).map((view) => view.status.name);
  const testEvent = enabled.length > 0 && (
    <>
      <p>See it work now: send a realistic, correctly signed test event through switchboard’s own receiver.</p>
      <SendTestEvent providers={enabled} />
    </>
  );
  if (!webhook) {
    return (
      <div className="empty-state">
        <h2>No events yet</h2>
        <p>Your providers are queues: events appear here as soon as a message is published.</p>
        {testEvent}
      </div>
    );
  }
  const command = tryItCommand(webhook);
  const signed = webhook.status.trust_mode === 'signed';
  return (
    <div className="empty-state">
      <h2>No events yet</h2>
      {testEvent}
      <p>
        Point <strong>{webhook.status.name}</strong> at its receive URL. Deliveries appear here the moment they are stored.
      </p>
      <CopyField label={`${webhook.status.name} receive URL`} value={webhook.public_url ?? webhook.receive_url!} />
      {!webhook.public_url && settings && (
        <p className="muted small">
          From the internet, expose the receiver with a tunnel, e.g. <code>ngrok http {settings.running.receiver_port}</code>, and set its URL as the public URL in
          Settings.
        </p>
      )}
      {command && (
        <>
          <p>Or try it from a terminal now:</p>
          <CopyField label="Try-it command" value={command} />
          {signed &&
            (webhook.status.secret_status === 'missing' ? (
              <p className="muted small">
                {webhook.status.name} has no secret configured yet, so every request is refused (503 secret_not_configured) until it has one — see Providers.
              </p>
            ) : (
              <p className="muted small">An unsigned request is refused (401) and listed under Providers → Rejections with the reason — try it and see.</p>
            ))}
          {webhook.status.trust_mode === 'token' && <p className="muted small">Set TOKEN to the provider’s token first.</p>}
        </>
      )}
    </div>
  );
}
