import { idempotent, pathAlias, routeTable } from '../../shared/http/route.js';
import { uploadCompleteOperation } from './upload-complete.js';
import { uploadPolicyOperation } from './upload-policy.js';

/**
 * The upload flow (spec: Uploads). The reference listing also shows `/upload-policy` and
 * `/upload-complete` without the `uploads` segment (Uploads rule 7): both forms run the same
 * operation, so scripts written for either keep working; the OpenAPI document marks the short
 * forms deprecated and points to the `/uploads/...` routes.
 */
export const uploadsRoutes = routeTable({
  'POST /api/v2/uploads/upload-policy': idempotent(uploadPolicyOperation),
  'POST /api/v2/upload-policy': pathAlias(
    'POST /api/v2/uploads/upload-policy',
    'Request an upload policy, short path',
    idempotent(uploadPolicyOperation),
  ),
  'POST /api/v2/uploads/upload-complete': uploadCompleteOperation,
  'POST /api/v2/upload-complete': pathAlias(
    'POST /api/v2/uploads/upload-complete',
    'Confirm an upload, short path',
    uploadCompleteOperation,
  ),
});
