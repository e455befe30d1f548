import { describe, expect, it } from 'vitest';
import { storedPrincipalOf } from '../../shared/domain/live/credentials.js';
import {
  eventMessageText,
  MAX_CLIENT_MESSAGE_BYTES,
  messageText,
  parseClientMessage,
  subscribedMessage,
} from '../../shared/domain/live/protocol.js';

/** Issue 32: the live-update message protocol (DESIGN.md "Live updates"), the same locally and deployed. */

const MARKUP = '3f2b8c1e-7a4d-4e2f-9b1c-0d5e6f7a8b9c';

describe('parseClientMessage', () => {
  it('takes a subscribe with and without after', () => {
    expect(parseClientMessage(JSON.stringify({ type: 'subscribe', markupId: MARKUP }))).toEqual({
      ok: true,
      message: { type: 'subscribe', markupId: MARKUP },
    });
    expect(parseClientMessage(JSON.stringify({ type: 'subscribe', markupId: MARKUP, after: 0 }))).toEqual({
      ok: true,
      message: { type: 'subscribe', markupId: MARKUP, after: 0 },
    });
    expect(parseClientMessage(JSON.stringify({ type: 'subscribe', markupId: MARKUP, after: 42 }))).toEqual({
      ok: true,
      message: { type: 'subscribe', markupId: MARKUP, after: 42 },
    });
    // A null after is no after; unknown fields are ignored, as the HTTP API ignores them.
    expect(parseClientMessage(JSON.stringify({ type: 'subscribe', markupId: MARKUP, after: null, extra: 1 }))).toEqual({
      ok: true,
      message: { type: 'subscribe', markupId: MARKUP },
    });
  });

  it('reads a markup id in any case as the lower-case id', () => {
    expect(parseClientMessage(JSON.stringify({ type: 'subscribe', markupId: MARKUP.toUpperCase() }))).toMatchObject({
      ok: true,
      message: { markupId: MARKUP },
    });
  });

  it.each([
    ['text that is not JSON', 'hello', null, 'JSON object'],
    ['a JSON array', '[]', null, 'JSON object'],
    ['JSON null', 'null', null, 'JSON object'],
    ['a JSON string', '"subscribe"', null, 'JSON object'],
    ['another type', JSON.stringify({ type: 'unsubscribe', markupId: MARKUP }), MARKUP, '"type"'],
    ['no type', JSON.stringify({ markupId: MARKUP }), MARKUP, '"type"'],
    ['no markupId', JSON.stringify({ type: 'subscribe' }), null, '"markupId" is required'],
    ['a markupId that is not a UUID', JSON.stringify({ type: 'subscribe', markupId: '../etc' }), null, 'UUID'],
    ['a markupId that is a number', JSON.stringify({ type: 'subscribe', markupId: 7 }), null, 'UUID'],
    ['a negative after', JSON.stringify({ type: 'subscribe', markupId: MARKUP, after: -1 }), MARKUP, '"after"'],
    ['a fractional after', JSON.stringify({ type: 'subscribe', markupId: MARKUP, after: 1.5 }), MARKUP, '"after"'],
    ['an after given as text', JSON.stringify({ type: 'subscribe', markupId: MARKUP, after: '3' }), MARKUP, '"after"'],
    ['an after beyond 2^53', `{"type":"subscribe","markupId":"${MARKUP}","after":9007199254740993}`, MARKUP, '"after"'],
  ])('answers %s with a 400 error message', (_what, text, markupId, detail) => {
    const parsed = parseClientMessage(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toEqual({ type: 'error', markupId, status: 400, detail: expect.stringContaining(detail) });
  });

  it('refuses a message over the size limit without parsing it', () => {
    const text = JSON.stringify({ type: 'subscribe', markupId: MARKUP, padding: 'x'.repeat(MAX_CLIENT_MESSAGE_BYTES) });
    expect(parseClientMessage(text)).toMatchObject({ ok: false, error: { status: 400, markupId: null } });
  });
});

describe('server messages', () => {
  it("are the contract's shapes", () => {
    expect(JSON.parse(messageText(subscribedMessage(MARKUP, 7)))).toEqual({ type: 'subscribed', markupId: MARKUP, seq: 7 });
  });

  it('carry the stored webhook body as it is, byte for byte', () => {
    const body =
      '{"id":"e1","type":"comment_created","workspaceId":"w","createdAt":"2026-01-01T00:00:00.000Z","data":{"markup":null,"user":null,"comment":null}}';
    const text = eventMessageText(MARKUP, 3, body);
    expect(JSON.parse(text)).toEqual({ type: 'event', markupId: MARKUP, seq: 3, event: JSON.parse(body) });
    expect(text).toContain(body);
  });
});

describe('storedPrincipalOf', () => {
  it("keeps who the caller is and drops the request's own state (liveness answer, permission)", () => {
    const stored = storedPrincipalOf({
      kind: 'apiKey',
      keyId: 'k1',
      organizationId: 'o1',
      userId: 'u1',
      scope: 'workspace',
      workspaceId: 'w1',
      actsAsMember: false,
      authorization: { permission: 'live:ticket', authorized: true, roles: new Map() },
    });
    expect(stored).toEqual({
      kind: 'apiKey',
      keyId: 'k1',
      organizationId: 'o1',
      userId: 'u1',
      scope: 'workspace',
      workspaceId: 'w1',
      actsAsMember: false,
    });
  });
});
