import { describe, expect, it } from 'vitest';
import { commentKeys, webhookLinks } from '../../shared/domain/webhook-events.js';

describe('webhook body links: API_URL and APP_URL stand in for each other', () => {
  it('uses each for its own links when both are set', () => {
    expect(webhookLinks({ apiUrl: 'https://api.example', appUrl: 'https://app.example' })).toEqual({ origin: 'https://api.example', appUrl: 'https://app.example' });
  });
  it('links markups to the API origin without APP_URL, as the API handler does', () => {
    expect(webhookLinks({ apiUrl: 'https://api.example', appUrl: undefined })).toEqual({ origin: 'https://api.example', appUrl: 'https://api.example' });
  });
  it('takes APP_URL as the origin without API_URL, and root-relative links without either', () => {
    expect(webhookLinks({ apiUrl: undefined, appUrl: 'https://app.example' })).toEqual({ origin: 'https://app.example', appUrl: 'https://app.example' });
    expect(webhookLinks({ apiUrl: undefined, appUrl: undefined })).toEqual({ origin: '', appUrl: '' });
  });
});

describe('comment and message keys of a body', () => {
  const comment = { id: 't' };
  const message = { id: 'm' };
  it('has neither on markup events', () => {
    expect(commentKeys({}, null, null)).toEqual({});
  });
  it('has comment on thread events and message only when the event names one', () => {
    expect(commentKeys({ threadId: 't' }, comment, null)).toEqual({ comment });
    expect(commentKeys({ threadId: 't', messageId: 'm' }, comment, message)).toEqual({ comment, message });
  });
  it('keeps the keys, null, when the records are gone', () => {
    expect(commentKeys({ threadId: 't', messageId: 'm' }, null, null)).toEqual({ comment: null, message: null });
  });
});
