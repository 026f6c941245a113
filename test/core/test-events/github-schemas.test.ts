import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { GITHUB_FIXTURES } from '../../../src/core/test-events/github.js';
import { fixtureContext } from '../../../src/core/test-events/fixture.js';

/** GitHub's own published webhook schemas (@octokit/openapi-webhooks) are the oracle for our payloads. */
const require = createRequire(import.meta.url);
const spec = require('@octokit/openapi-webhooks/generated/api.github.com.json') as { components: { schemas: Record<string, unknown> } };

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
ajv.addSchema({ $id: 'github', components: spec.components });

const SCHEMAS: Record<string, string> = {
  push: 'webhook-push',
  'pull_request.opened': 'webhook-pull-request-opened',
  ping: 'webhook-ping',
  'issues.opened': 'webhook-issues-opened',
};

describe('GitHub test event payloads', () => {
  it('cover the catalog', () => {
    expect(GITHUB_FIXTURES.map((fixture) => fixture.eventType).sort()).toEqual(Object.keys(SCHEMAS).sort());
  });

  it('the schemas do judge: a push without its repository is refused', () => {
    const validate = ajv.compile({ $ref: 'github#/components/schemas/webhook-push' });
    const { repository: _repository, ...rest } = GITHUB_FIXTURES[0]!.build(fixtureContext('github', Date.now())).json as Record<string, unknown>;
    expect(validate(rest)).toBe(false);
    const withBadOwner = { ...GITHUB_FIXTURES[0]!.build(fixtureContext('github', Date.now())).json, sender: { login: 1 } };
    expect(validate(withBadOwner)).toBe(false);
  });

  it.each(GITHUB_FIXTURES.map((fixture) => [fixture.eventType, fixture] as const))('%s validates against GitHub’s webhook schema', (eventType, fixture) => {
    const validate = ajv.compile({ $ref: `github#/components/schemas/${SCHEMAS[eventType]}` });
    const built = fixture.build(fixtureContext('github', Date.now()));
    const valid = validate(built.json);
    expect(validate.errors ?? [], JSON.stringify(validate.errors?.slice(0, 5), null, 2)).toEqual([]);
    expect(valid).toBe(true);
    // The header names the event the schema is for.
    expect(built.headers?.['x-github-event']).toBe(eventType.split('.')[0]);
  });
});
