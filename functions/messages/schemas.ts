import * as v from 'valibot';
import { Id } from '../../shared/http/schemas.js';
import { MessageBodyEntries, MessageSchema, Priority } from '../threads/schemas.js';

export const MessageIdParams = v.object({ id: Id });
/** `/threads/{id}/messages`: the thread id is `id`, as on every other `/threads/{id}` route (API Gateway refuses two names at one level). */
export const ThreadMessagesParams = v.object({ id: Id });

export const CreateMessageBody = v.object(MessageBodyEntries);

export const UpdateMessageBody = v.object({ ...MessageBodyEntries, priority: v.optional(v.nullable(Priority)) });

/** PATCH /messages/{id} answers the message under `message`. */
export const UpdatedMessageSchema = v.object({ message: MessageSchema });
