/** Who is calling. API keys act as their own API user, or as the workspace member they were made for. */
export type Principal = OrganizationKeyPrincipal | WorkspaceKeyPrincipal;

interface KeyPrincipalBase {
  kind: 'apiKey';
  keyId: string;
  organizationId: string;
  userId: string;
}

export interface OrganizationKeyPrincipal extends KeyPrincipalBase {
  scope: 'organization';
  workspaceId?: undefined;
}

export interface WorkspaceKeyPrincipal extends KeyPrincipalBase {
  scope: 'workspace';
  workspaceId: string;
}
