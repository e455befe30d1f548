import { beforeAll, describe, expect, it } from 'vitest';
import { call, makeOrganization, type Org } from '../support/api.js';
import { expectProblem } from '../support/problems.js';
import { createThread, makeTypedMarkup, threadBody } from '../support/threads.js';

/**
 * Issue 31 (DESIGN.md "Embeddable client"): a webpage thread keeps the extension field `anchor`,
 * the W3C Web Annotation selectors of its element, and answers it on every read: the creation,
 * GET /threads/:id and the list (move-pin answers the spec's thread record, without it). A pin moved to new elements without new selectors
 * loses the old ones (they would name the old element).
 */
const ANCHOR = {
  css: 'main > article:nth-of-type(2) > h2',
  textQuote: { exact: 'Pricing for teams', prefix: 'Plans\n', suffix: '\nEvery plan includes' },
  textPosition: { start: 120, end: 137 },
};

describe('webpage threads keep their anchor (issue 31)', () => {
  let org: Org;
  beforeAll(async () => {
    org = await makeOrganization();
  });

  it('answers the anchor on creation, GET /threads/:id and GET /threads', async () => {
    const markup = await makeTypedMarkup(org, 'webpage', { url: 'https://example.com/pricing' });
    const thread = await createThread(org.workspaceKey, markup, { anchor: ANCHOR });
    expect(thread.anchor).toEqual(ANCHOR);

    const read = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });
    expect(read.status).toBe(200);
    expect(read.body.data.anchor).toEqual(ANCHOR);

    const listed = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });
    expect(listed.body.data.threads.map((one: { anchor: unknown }) => one.anchor)).toEqual([ANCHOR]);
  });

  it('answers null for a webpage thread made without one, and takes the CSS selector alone', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    expect((await createThread(org.workspaceKey, markup)).anchor).toBeNull();
    expect((await createThread(org.workspaceKey, markup, { anchor: { css: '#hero' } })).anchor).toEqual({ css: '#hero' });
  });

  it('refuses a malformed anchor with a 400 naming the field, and writes nothing', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const body = (anchor: unknown) => threadBody(markup, { anchor });
    expectProblem(
      await call('POST', '/threads', { key: org.workspaceKey, body: body({ textQuote: { exact: 'x' } }) }),
      400,
      '/body/anchor/css',
    );
    expectProblem(
      await call('POST', '/threads', { key: org.workspaceKey, body: body({ css: 'h1', textPosition: { start: 9, end: 3 } }) }),
      400,
      '/body/anchor/textPosition',
    );
    expectProblem(
      await call('POST', '/threads', { key: org.workspaceKey, body: body({ css: 'h1', textQuote: { exact: 7 } }) }),
      400,
      '/body/anchor/textQuote/exact',
    );
    expectProblem(await call('POST', '/threads', { key: org.workspaceKey, body: body('h1') }), 400, '/body/anchor');
    const listed = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });
    expect(listed.body.data.total).toBe(0);
  });

  it('move-pin replaces the anchor when one is sent and drops it when the elements move without one', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup, { anchor: ANCHOR });
    const element = { elementPath: 'html > body > footer', offsetXPercentage: 10, offsetYPercentage: 20 };

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: { url: 'https://example.com/', elements: [element], anchor: { css: 'footer', textQuote: { exact: 'Contact' } } },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data.anchor).toEqual({
      css: 'footer',
      textQuote: { exact: 'Contact' },
    });

    const again = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: { url: 'https://example.com/', elements: [element] },
    });
    expect(again.status).toBe(200);
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data.anchor).toBeNull();
  });
});
