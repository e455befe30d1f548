import { createUrlMarkups } from '../../shared/domain/markups/create.js';
import { toPublicMarkup } from '../../shared/domain/markups/view.js';
import { ok, operation } from '../../shared/http/route.js';
import { MarkupSchema, UrlMarkupBody } from './schemas.js';

export const createFromUrlOperation = operation({
  operationId: 'createMarkupFromUrl',
  summary: 'Create a markup from a URL',
  description:
    'Creates a webpage markup from an address, charged to the monthly allowance, then the bundle. ' +
    "`name` defaults to the URL hostname; `workspaceId` to the key's workspace (organization keys: the folder's workspace, " +
    "else the organization's default); `parentFolderId` to the workspace root. 402 when the allowance and bundle are used up.",
  auth: 'apiKey',
  permission: 'markup:create',
  body: UrlMarkupBody,
  responses: [{ status: 200, description: 'The new markup', schema: MarkupSchema }],
  handle: async ({ principal, body, appUrl }) => {
    const { records, access } = await createUrlMarkups(principal, [body]);
    return ok(await toPublicMarkup(records[0]!, { role: access.role, plan: access.plan, appUrl }));
  },
});
