import { describe, expect, it } from 'vitest';
import { displayNameOf, externalUserAccount, FORMER_USER_NAME, type ExternalUserRecord } from '../../shared/db/external-users.js';
import type { User } from '../../shared/db/users.js';
import { authorOf } from '../../shared/domain/comments/views.js';
import { fieldsFromClaims } from '../../shared/domain/users/external-users.js';

function makeUser(overrides: Partial<User> = {}): User {
  return { id: 'user-1', name: 'Ada', email: null, emailVerified: false, kind: 'member', createdAt: 1, modifiedAt: 2, ...overrides };
}

function makeExternalUser(overrides: Partial<ExternalUserRecord> = {}): ExternalUserRecord {
  return {
    workspaceId: 'ws-1',
    organizationId: 'org-1',
    externalId: 'customer-42',
    userId: 'user-9',
    name: null,
    email: null,
    avatarUrl: null,
    avatarFileId: null,
    createdAt: 5,
    modifiedAt: 6,
    ...overrides,
  };
}

describe('thread and message authors (Resources: Thread `user.guest`; DESIGN "End users and external users")', () => {
  it('marks an external user a guest, with its name', () => {
    const user = makeUser({ kind: 'external', name: 'Grace' });

    expect(authorOf(user.id, new Map([[user.id, user]]))).toEqual({
      id: 'user-1',
      createdAt: 1,
      modifiedAt: 2,
      name: 'Grace',
      guest: true,
    });
  });

  it('never marks API users or members guests', () => {
    for (const kind of ['api', 'member'] as const) {
      const user = makeUser({ kind });

      expect(authorOf(user.id, new Map([[user.id, user]])).guest, kind).toBe(false);
    }
  });

  it('keeps a deleted external user a guest named "Former user"', () => {
    const user = makeUser({ kind: 'external', name: FORMER_USER_NAME });

    expect(authorOf(user.id, new Map([[user.id, user]]))).toMatchObject({ name: 'Former user', guest: true });
  });
});

describe('the name an external user authors as', () => {
  it('is its name, else its email, else its externalId', () => {
    expect(displayNameOf(makeExternalUser({ name: 'Grace', email: 'g@example.com' }))).toBe('Grace');
    expect(displayNameOf(makeExternalUser({ email: 'g@example.com' }))).toBe('g@example.com');
    expect(displayNameOf(makeExternalUser())).toBe('customer-42');
  });

  it('is held by a User of kind external that carries no email of its own', () => {
    expect(externalUserAccount(makeExternalUser({ email: 'g@example.com' }))).toEqual({
      id: 'user-9',
      name: 'g@example.com',
      email: null,
      emailVerified: false,
      kind: 'external',
      createdAt: 5,
      modifiedAt: 6,
    });
  });
});

describe('customer JWT claims fill an external user only with what the API would accept', () => {
  it('takes name, email and an https picture as avatarUrl', () => {
    expect(fieldsFromClaims({ name: '  Grace  ', email: 'g@example.com', picture: 'https://cdn.example.com/g.png' })).toEqual({
      name: 'Grace',
      email: 'g@example.com',
      avatarUrl: 'https://cdn.example.com/g.png',
    });
  });

  it.each([
    ['an http picture', { picture: 'http://cdn.example.com/g.png' }],
    ['a javascript: picture', { picture: 'javascript:alert(1)' }],
    ['a name of 201 characters', { name: 'x'.repeat(201) }],
    ['an empty name', { name: '   ' }],
    ['a name with a lone surrogate', { name: 'a\ud800b' }],
    ['a name with a control character', { name: 'a\u0007b' }],
    ['an address without a domain', { email: 'grace@' }],
    ['a number for a name', { name: 42 as unknown as string }],
  ])('leaves out %s', (_label, claims) => {
    expect(fieldsFromClaims(claims)).toEqual({});
  });
});
