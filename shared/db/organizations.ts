import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { updateIfConditionHolds } from './core/transact.js';

export interface Organization {
  id: string;
  name: string;
  /** The workspace organization keys act on when a request names none. */
  defaultWorkspaceId: string | null;
  createdAt: string;
}

export const organizationKey = (organizationId: string) => ({ PK: `ORG#${organizationId}`, SK: 'ORG' });

export function toOrganizationItem(organization: Organization): Record<string, unknown> {
  return { ...organizationKey(organization.id), entity: 'Organization', ...organization };
}

export function fromOrganizationItem(item: Record<string, unknown>): Organization {
  return {
    id: item.id as string,
    name: item.name as string,
    defaultWorkspaceId: (item.defaultWorkspaceId as string | null | undefined) ?? null,
    createdAt: item.createdAt as string,
  };
}

export async function getOrganization(organizationId: string): Promise<Organization | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: organizationKey(organizationId) }));
  return result.Item ? fromOrganizationItem(result.Item) : undefined;
}

export async function clearDefaultWorkspace(organizationId: string, workspaceId: string): Promise<void> {
  // Only while it is still this workspace: another default set meanwhile stays.
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: organizationKey(organizationId),
    UpdateExpression: 'SET defaultWorkspaceId = :none',
    ConditionExpression: 'defaultWorkspaceId = :id',
    ExpressionAttributeValues: { ':none': null, ':id': workspaceId },
  });
}
