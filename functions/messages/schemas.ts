import * as v from 'valibot';
import { Id } from '../../shared/http/schemas.js';
import { MESSAGE_EXAMPLE, MessageBodyEntries, MessageSchema, Priority } from '../threads/schemas.js';

export const MessageIdParams = v.object({ id: Id });
/**
 * `/threads/{id}/messages`: the thread id is `id`, as on every other `/threads/{id}` route (API Gateway refuses two names at one level).
 */
export const ThreadMessagesParams = v.object({ id: Id });

export const CreateMessageBody = v.pipe(v.object(MessageBodyEntries), v.examples([MESSAGE_EXAMPLE]));

export const UpdateMessageBody = v.pipe(
  v.object({ ...MessageBodyEntries, priority: v.optional(v.nullable(Priority)) }),
  v.examples([MESSAGE_EXAMPLE]),
);

/** PATCH /messages/{id} answers the message under `message`. */
export const UpdatedMessageSchema = v.object({ message: MessageSchema });
