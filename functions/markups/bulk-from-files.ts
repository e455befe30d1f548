import * as v from 'valibot';
import { HttpError } from '../../shared/http/errors.js';
import { route } from '../../shared/http/route.js';

/**
 * 501 is a deliberate answer the caller should read, so it is exposed although it is a 5xx (the
 * base class hides every status >= 500 behind a generic 500).
 */
export class NotImplementedError extends HttpError {
  override readonly expose = true;

  constructor(detail: string) {
    super(501, 'not-implemented', 'Not Implemented', detail);
  }
}

export const bulkFromFilesRoute = route({
  method: 'POST',
  path: '/api/v2/markups/bulk/from-files',
  operationId: 'bulkCreateMarkupsFromFiles',
  summary: 'Not implemented: always answers 501 (create each markup with POST /markups/from-files)',
  auth: 'apiKey',
  body: v.unknown(),
  responses: [{ status: 501, description: 'Not implemented' }],
  handle: async () => {
    throw new NotImplementedError('Bulk creation from files is not implemented. Create each markup with POST /api/v2/markups/from-files.');
  },
});
