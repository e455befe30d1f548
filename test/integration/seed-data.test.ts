import { describe, expect, it } from 'vitest';
import { getOrganization } from '../../shared/db/organizations.js';
import { call, localStack } from '../support/api.js';
import { createThread, makeTypedMarkup } from '../support/threads.js';

describe('the local stack seeds an organization a user recognises (DESIGN.md local stack contract)', () => {
  it('names the seeded organization and its workspace distinctly, as a real team would', async () => {
    const { stack } = localStack();

    const organization = await getOrganization(stack.organizationId);
    const workspace = await call('GET', '/workspace', { key: stack.workspaceApiKey });

    expect(organization?.name).toBe('Acme Design');
    expect(workspace.body.data).toMatchObject({ id: stack.workspaceId, name: 'Website redesign' });
  });

  it('shows the label of the seeded key as the author of what it writes', async () => {
    const { stack } = localStack();
    const markup = await makeTypedMarkup(stack, 'image');

    const byWorkspaceKey = await createThread(stack.workspaceApiKey, markup);
    const byOrganizationKey = await createThread(stack.organizationApiKey, markup);

    expect(byWorkspaceKey.user).toMatchObject({ name: 'Local workspace key', guest: false });
    expect(byOrganizationKey.user).toMatchObject({ name: 'Local organization key', guest: false });
  });
});
