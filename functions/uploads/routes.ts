import type { AnyRoute } from '../../shared/http/route.js';
import { uploadCompleteAliasRoute, uploadCompleteRoute } from './upload-complete.js';
import { uploadPolicyAliasRoute, uploadPolicyRoute } from './upload-policy.js';

/**
 * The upload flow (spec: Uploads). The reference listing also shows `/upload-policy` and
 * `/upload-complete` without the `uploads` segment; both forms run the same operation.
 */
export const uploadsRoutes: readonly AnyRoute[] = [uploadPolicyRoute, uploadPolicyAliasRoute, uploadCompleteRoute, uploadCompleteAliasRoute];
