import type { FixtureContext, TestFixture } from './fixture.js';

/**
 * Linear data-change webhooks (https://linear.app/developers/webhooks): `{action, type, data,
 * url, createdAt, organizationId, webhookTimestamp, webhookId}`; `webhookTimestamp` (ms) is
 * inside the signed body and is what the consumer checks for freshness.
 */

const TEAM = { id: '72b2a2dc-6f4f-4423-9d34-24b5bd10634a', key: 'ENG', name: 'Engineering' };

function change(c: FixtureContext, action: 'create' | 'update' | 'remove', type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    json: {
      action,
      actor: { id: c.uuid(), name: 'Jenny Rosen', email: 'jenny@example.com', type: 'user', url: 'https://linear.app/acme/profiles/jenny' },
      createdAt: c.isoMs(),
      data,
      url: data.url,
      type,
      organizationId: c.uuid(),
      webhookTimestamp: c.nowMs,
      webhookId: c.uuid(),
      ...extra,
    },
    headers: { 'user-agent': 'Linear-Webhook', 'linear-delivery': c.uuid(), 'linear-event': type },
  };
}

function issue(c: FixtureContext, state: { id: string; name: string; type: string; color: string }) {
  const number = c.int(100, 999);
  return {
    id: c.uuid(),
    createdAt: c.isoMs(-3600),
    updatedAt: c.isoMs(),
    number,
    title: 'Webhook retries should back off exponentially',
    description: 'Today we retry every second. Use 1 s, 2 s, 4 s … up to a minute.',
    priority: 2,
    priorityLabel: 'High',
    estimate: 3,
    boardOrder: 0,
    sortOrder: -1_240.5,
    identifier: `${TEAM.key}-${number}`,
    url: `https://linear.app/acme/issue/${TEAM.key}-${number}/webhook-retries-should-back-off-exponentially`,
    teamId: TEAM.id,
    team: TEAM,
    stateId: state.id,
    state,
    assigneeId: null,
    creatorId: c.uuid(),
    labelIds: [],
    labels: [],
    subscriberIds: [],
    previousIdentifiers: [],
  };
}

const TODO = { id: 'b1e5b7c2-5d0a-4d3e-9a36-2e2f4a0b8c11', name: 'Todo', type: 'unstarted', color: '#e2e2e2' };
const IN_PROGRESS = { id: '0f5a6a4e-7c0e-4c1c-8b5e-5f2f7d0c9a22', name: 'In Progress', type: 'started', color: '#f2c94c' };

export const LINEAR_FIXTURES: TestFixture[] = [
  {
    eventType: 'Issue.create',
    description: 'An issue created',
    build: (c) => change(c, 'create', 'Issue', issue(c, TODO)),
  },
  {
    eventType: 'Issue.update',
    description: 'An issue moved to In Progress (with updatedFrom)',
    build: (c) => change(c, 'update', 'Issue', issue(c, IN_PROGRESS), { updatedFrom: { stateId: TODO.id, updatedAt: c.isoMs(-600) } }),
  },
  {
    eventType: 'Comment.create',
    description: 'A comment added to an issue',
    build(c) {
      const issueId = c.uuid();
      const number = c.int(100, 999);
      return change(c, 'create', 'Comment', {
        id: c.uuid(),
        createdAt: c.isoMs(),
        updatedAt: c.isoMs(),
        body: 'Reproduced locally with `switchboard trigger`.',
        issueId,
        issue: { id: issueId, title: 'Webhook retries should back off exponentially', identifier: `${TEAM.key}-${number}`, teamId: TEAM.id },
        userId: c.uuid(),
        reactionData: [],
        url: `https://linear.app/acme/issue/${TEAM.key}-${number}#comment-${c.hex(4)}`,
      });
    },
  },
];
