import * as v from 'valibot';
import { Id } from './builders.js';

/** The spec's Installation, with what the embedding client needs beside it (`allowedOrigins`, `markupId`). */
export const InstallationSchema = v.object({
  id: Id,
  createdAt: v.string(),
  modifiedAt: v.string(),
  deletedAt: v.null(),
  workspaceId: Id,
  publicKey: v.string(),
  status: v.literal('active'),
  allowedOrigins: v.nullable(v.array(v.string())),
  markupId: v.nullable(Id),
});

export type InstallationView = v.InferOutput<typeof InstallationSchema>;
