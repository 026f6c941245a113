import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SIGNED_KINDS } from '../../../src/shared/providers.js';
import { TEST_FIXTURES } from '../../../src/core/test-events/catalog.js';
import { renderTestEventsDoc, TEST_EVENTS_DOC_PATH } from '../../../src/core/test-events/catalog-doc.js';

describe('docs/test-events.md', () => {
  it('is what the catalog generates (UPDATE_DOCS=1 rewrites it)', async () => {
    const generated = renderTestEventsDoc();
    if (process.env.UPDATE_DOCS === '1') await writeFile(TEST_EVENTS_DOC_PATH, generated);
    expect(await readFile(TEST_EVENTS_DOC_PATH, 'utf8'), `${TEST_EVENTS_DOC_PATH} is stale: run UPDATE_DOCS=1 npx vitest run test/core/test-events/catalog-doc.test.ts`).toBe(generated);
  });

  it('has at least three event types for every signed kind, each named once', () => {
    for (const kind of SIGNED_KINDS) {
      const types = TEST_FIXTURES[kind].map((fixture) => fixture.eventType);
      expect(types.length, kind).toBeGreaterThanOrEqual(3);
      expect(new Set(types).size, kind).toBe(types.length);
    }
  });
});
