import { PROVIDER_KINDS } from '../../shared/providers.js';
import { TEST_FIXTURES } from './catalog.js';

/**
 * docs/test-events.md, rendered from the catalog so the two cannot drift (a test compares them;
 * `UPDATE_DOCS=1` rewrites the file).
 */
export const TEST_EVENTS_DOC_PATH = 'docs/test-events.md';

export function renderTestEventsDoc(): string {
  const out = [
    '# Test events',
    '',
    '<!-- Generated from src/core/test-events/ by src/core/test-events/catalog-doc.ts; test/core/test-events/catalog-doc.test.ts fails when they differ. -->',
    '',
    'A test event is a realistic event for one of your providers, made by switchboard: fresh ids and timestamps on every send,',
    'signed with the provider’s first configured secret by its own scheme, and POSTed to switchboard’s own receiver (queue',
    'providers: PUBLISH to the first channel, or XADD to the stream). It takes the path a real delivery takes — verified,',
    'stored, shown live, forwarded by forward rules — and is stored with `origin: "test"`, shown as **TEST** in the UI,',
    'the terminal and every summary.',
    '',
    '```sh',
    'switchboard trigger github push                       # the CLI',
    'switchboard trigger stripe checkout.session.completed --set data.object.amount_total=999',
    'switchboard trigger stripe --list',
    '```',
    '',
    'The API methods are `listTestEvents` and `sendTestEvent` (`POST /api/sendTestEvent` with',
    '`{"provider", "event_type"?, "overrides"?, "payload"?}`), the MCP tool is `send_test_event`, and the UI has a',
    '**Send test event** control on each provider and on the empty Events screen.',
    '',
    '* **Overrides**: `{"data.object.amount_total": 999}` — a dot path into the JSON (numeric segments index arrays, missing',
    '  objects are created) and a JSON value (the CLI parses `--set path=value` as JSON, else takes it as a string). For',
    '  form-encoded fixtures (Slack slash command, Twilio) the path is the form field’s name. Or send a whole `payload`',
    '  instead (signed as is; not together with overrides).',
    '* **Errors**: an unknown provider or event type, a disabled provider, or one without a usable secret is',
    '  `invalid_argument`, and the message names what exists (the configured providers, the kind’s test events, the secret’s',
    '  source). Twilio signs the public URL it calls, so it needs `receiver.public_url`.',
    '* **How TEST is kept honest**: the receiver believes a delivery is a test event only when it carries a one-time mark',
    '  this process minted for exactly that provider and body (an HMAC with a per-process key); the mark is removed before',
    '  the headers are stored. A mark sent by anyone else is stored «redacted» and the event stays a provider event.',
    '  Discord signs with a private key only Discord holds: Discord test events are signed with a key pair the running',
    '  switchboard makes, and only a marked delivery is checked against that key (its `verify_detail` says so).',
    '',
    '## Catalog',
    '',
    'The first event of each kind is the default.',
    '',
  ];
  const seen = new Map<unknown, string>();
  for (const kind of PROVIDER_KINDS) {
    const fixtures = TEST_FIXTURES[kind];
    out.push(`### ${kind}`, '');
    const same = seen.get(fixtures);
    if (same) {
      out.push(`The same generic event as \`${same}\`.`, '');
      continue;
    }
    seen.set(fixtures, kind);
    out.push('| event type | what it is |', '|---|---|');
    for (const fixture of fixtures) out.push(`| \`${fixture.eventType}\` | ${fixture.description} |`);
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
