import { describe, expect, it } from 'vitest';
import { call, makeOrganization, type ApiResponse, type Org } from '../support/api.js';
import { endUserToken } from '../support/end-users.js';
import { expectProblem } from '../support/problems.js';
import { makeTypedMarkup, threadBody } from '../support/threads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/**
 * An exchange token is no API key: what the service tells an end user (the embedded client shows
 * it) names the exchange token, and API keys keep being told about their API key.
 */

const ownerOf = (org: Org, workspaceId = org.workspaceId) =>
  endUserToken({ organizationId: org.organizationId, workspaceId, markupRole: 'project:owner' });

/**
 * A problem whose detail names `credential` as the caller's. An exchange-token caller may still be
 * told which API key an operation needs, never that it holds one.
 */
function expectDetailNaming(response: ApiResponse, status: number, credential: 'exchange token' | 'API key', pointer?: string): void {
  expectProblem(response, status, pointer);
  const detail = [response.body.detail, ...(response.body.errors ?? []).map((error: { detail: string }) => error.detail)].join(' ');
  if (credential === 'exchange token') {
    expect(detail).not.toMatch(/(this|the|with an) (API )?key\b/i);
    expect(detail).toContain('exchange token');
  } else {
    expect(detail).toContain('API key');
  }
}

describe('messages to exchange-token callers name the exchange token, not an API key', () => {
  it("another organization's markup: 403 says it is not in this exchange token's organization (reads, writes, deletes)", async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const token = await ownerOf(other);

    const read = await call('GET', `/markups/${markup.id}`, { key: token });
    const thread = await call('POST', '/threads', { key: token, body: threadBody(markup) });
    const deleted = await call('DELETE', `/markups/${markup.id}`, { key: token });
    const byKey = await call('GET', `/markups/${markup.id}`, { key: other.workspaceKey });

    for (const refused of [read, thread, deleted]) expectDetailNaming(refused, 403, 'exchange token');
    expect(read.body.detail).toContain(`${markup.id}`);
    expectDetailNaming(byKey, 403, 'API key');
  });

  it('another workspace of the organization named by workspaceId: 403 says the exchange token is scoped to its workspace', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const token = await ownerOf(org);

    const refused = await call('GET', '/markups', { key: token, query: { workspaceId: second.id } });
    const byKey = await call('GET', '/markups', { key: org.workspaceKey, query: { workspaceId: second.id } });

    expectDetailNaming(refused, 403, 'exchange token');
    expect(refused.body.detail).toContain(`scoped to workspace ${org.workspaceId}`);
    expectDetailNaming(byKey, 403, 'API key');
  });

  it('an organization-key operation: 403 organization-key-required says the exchange token is scoped to one workspace', async () => {
    const org = await makeOrganization();
    const token = await ownerOf(org);

    const listed = await call('GET', '/workspaces', { key: token });
    const byKey = await call('GET', '/workspaces', { key: org.workspaceKey });

    expectDetailNaming(listed, 403, 'exchange token');
    expect(listed.body.detail).toMatch(/^Only an organization-scoped API key may .*; this exchange token is scoped to one workspace\.$/);
    expect(listed.body.type).toMatch(/organization-key-required$/);
    expect(byKey.body.detail).toMatch(/this API key is scoped to one workspace/);
  });

  it('a token of a deleted workspace: 401 says the exchange token belongs to a deleted workspace', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const token = await ownerOf(org, second.id);
    expect((await call('DELETE', '/workspace', { key: org.orgKey, query: { workspaceId: second.id } })).status).toBe(204);

    expectDetailNaming(await call('GET', '/markups', { key: token }), 401, 'exchange token');
  });

  it('POST /threads without projectId: 400 naming /body/projectId, required whatever the credential', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const { projectId: _left, ...body } = threadBody(markup);

    for (const key of [await ownerOf(org), org.workspaceKey]) {
      const refused = await call('POST', '/threads', { key, body });

      expectProblem(refused, 400, '/body/projectId');
      expect(JSON.stringify(refused.body)).not.toMatch(/API key/);
    }
  });
});
