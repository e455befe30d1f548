import { describe, expect, it } from 'vitest';
import { commentKeys } from '../../shared/domain/webhooks/events.js';
import type { MessageView, ThreadView } from '../../shared/schemas/threads.js';

describe('comment and message keys of a body', () => {
  // Stand-ins: the keys carry the views as they are, whatever they hold.
  const comment = { id: 't' } as ThreadView;
  const message = { id: 'm' } as MessageView;
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
