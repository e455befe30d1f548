import { NotImplementedError } from '../../shared/http/errors.js';
import { operation } from '../../shared/http/route.js';
import { BulkFromFilesBody } from './schemas.js';

export const bulkFromFilesOperation = operation({
  operationId: 'bulkCreateMarkupsFromFiles',
  summary: 'Not implemented: always answers 501 (create each markup with POST /markups/from-files)',
  auth: 'apiKey',
  body: BulkFromFilesBody,
  responses: [{ status: 501, description: 'Not implemented' }],
  handle: async () => {
    throw new NotImplementedError('Bulk creation from files is not implemented. Create each markup with POST /api/v2/markups/from-files.');
  },
});
