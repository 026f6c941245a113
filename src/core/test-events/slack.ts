import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Slack Events API callbacks (https://api.slack.com/apis/events-api#callback-field) and a
 * slash command, which Slack sends form-encoded (https://api.slack.com/interactivity/slash-commands).
 */

const USER_AGENT = 'Slackbot 1.0 (+https://api.slack.com/robots)';

function ts(c: FixtureContext): string {
  return `${c.unix()}.${String(c.int(0, 999_999)).padStart(6, '0')}`;
}

function callback(c: FixtureContext, event: Record<string, unknown>) {
  const team = `T${c.id('', 10).toUpperCase()}`;
  const app = `A${c.id('', 10).toUpperCase()}`;
  return {
    json: {
      token: c.id('', 24),
      team_id: team,
      context_team_id: team,
      api_app_id: app,
      event,
      type: 'event_callback',
      event_id: `Ev${c.id('', 9).toUpperCase()}`,
      event_time: c.unix(),
      authorizations: [{ enterprise_id: null, team_id: team, user_id: `U${c.id('', 10).toUpperCase()}`, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: `4-${c.id('', 60)}`,
    },
    headers: { 'user-agent': USER_AGENT },
  };
}

export const SLACK_FIXTURES: TestFixture[] = [
  {
    eventType: 'message',
    description: 'A message posted in a public channel (Events API event_callback)',
    build(c) {
      const at = ts(c);
      return callback(c, {
        type: 'message',
        channel: `C${c.id('', 10).toUpperCase()}`,
        user: `U${c.id('', 10).toUpperCase()}`,
        text: 'Is the deploy done?',
        ts: at,
        event_ts: at,
        channel_type: 'channel',
        client_msg_id: c.uuid(),
        team: `T${c.id('', 10).toUpperCase()}`,
        blocks: [{ type: 'rich_text', block_id: c.id('', 5), elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'Is the deploy done?' }] }] }],
      });
    },
  },
  {
    eventType: 'app_mention',
    description: 'The app @-mentioned in a channel (Events API event_callback)',
    build(c) {
      const at = ts(c);
      const bot = `U${c.id('', 10).toUpperCase()}`;
      return callback(c, {
        type: 'app_mention',
        user: `U${c.id('', 10).toUpperCase()}`,
        text: `<@${bot}> deploy api to staging`,
        ts: at,
        event_ts: at,
        channel: `C${c.id('', 10).toUpperCase()}`,
        client_msg_id: c.uuid(),
      });
    },
  },
  {
    eventType: 'slash_command',
    description: 'The slash command /deploy (form-encoded; stored as "command /deploy")',
    build(c) {
      const team = `T${c.id('', 10).toUpperCase()}`;
      return {
        form: {
          token: c.id('', 24),
          team_id: team,
          team_domain: 'acme',
          channel_id: `C${c.id('', 10).toUpperCase()}`,
          channel_name: 'deploys',
          user_id: `U${c.id('', 10).toUpperCase()}`,
          user_name: 'jenny',
          command: '/deploy',
          text: 'api staging',
          api_app_id: `A${c.id('', 10).toUpperCase()}`,
          is_enterprise_install: 'false',
          response_url: `https://hooks.slack.com/commands/${team}/${c.int(1e12, 9e12)}/${c.id('', 24)}`,
          trigger_id: `${c.int(1e12, 9e12)}.${c.int(1e11, 9e11)}.${c.hex(16)}`,
        },
        headers: { 'user-agent': USER_AGENT },
      };
    },
  },
];
