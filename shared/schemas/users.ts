/** Workspace roles, strongest first: what members and keys are given, and what schemas accept. */
export const ROLES = ['owner', 'admin', 'contributor', 'viewer'] as const;

/** Where a workspace member stands: joined, or invited and not yet signed in. */
export const MEMBER_STATUSES = ['active', 'invited'] as const;
