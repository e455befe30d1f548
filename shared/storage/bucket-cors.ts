/**
 * The upload bucket's CORS rule, one definition for the deployed bucket (infra/stacks/data-stack.ts)
 * and the local S3 emulator (infra/local/s3.ts): browsers post presigned upload forms straight to
 * the bucket (the review app reads the answer's `ETag` for upload-complete) and read files back.
 */
export const UPLOAD_BUCKET_CORS = {
  allowedMethods: ['POST', 'PUT', 'GET', 'HEAD'] as const,
  allowedHeaders: ['*'],
  exposedHeaders: ['ETag'],
  maxAgeSeconds: 3000,
};

/** The rule as S3's CORSConfiguration XML document, for `origins`. */
export function bucketCorsXml(origins: readonly string[]): string {
  const rule = [
    ...origins.map((origin) => `<AllowedOrigin>${origin}</AllowedOrigin>`),
    ...UPLOAD_BUCKET_CORS.allowedMethods.map((method) => `<AllowedMethod>${method}</AllowedMethod>`),
    ...UPLOAD_BUCKET_CORS.allowedHeaders.map((header) => `<AllowedHeader>${header}</AllowedHeader>`),
    ...UPLOAD_BUCKET_CORS.exposedHeaders.map((header) => `<ExposeHeader>${header}</ExposeHeader>`),
    `<MaxAgeSeconds>${UPLOAD_BUCKET_CORS.maxAgeSeconds}</MaxAgeSeconds>`,
  ].join('');
  return `<CORSConfiguration><CORSRule>${rule}</CORSRule></CORSConfiguration>`;
}
