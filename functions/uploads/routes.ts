import { idempotent, routeTable } from '../../shared/http/route.js';
import { uploadCompleteAliasOperation, uploadCompleteOperation } from './upload-complete.js';
import { uploadPolicyAliasOperation, uploadPolicyOperation } from './upload-policy.js';

/**
 * The upload flow (spec: Uploads). The reference listing also shows `/upload-policy` and
 * `/upload-complete` without the `uploads` segment; both forms run the same operation.
 */
export const uploadsRoutes = routeTable({
  'POST /api/v2/uploads/upload-policy': idempotent(uploadPolicyOperation),
  'POST /api/v2/upload-policy': idempotent(uploadPolicyAliasOperation),
  'POST /api/v2/uploads/upload-complete': uploadCompleteOperation,
  'POST /api/v2/upload-complete': uploadCompleteAliasOperation,
});
