import { createInstallation, toPublicInstallation } from '../../shared/domain/installations/installations.js';
import { ok, operation } from '../../shared/http/route.js';
import { CreateInstallationBody, InstallationSchema } from './schemas.js';

export const createInstallationOperation = operation({
  operationId: 'createInstallation',
  summary: 'Create an installation',
  description:
    'Registers an embedded commenting client: its RSA public key, allowed origins and, with `url`, a webpage markup. ' +
    '`signingKey` is the RSA public key (at least 2048 bits) in PEM, SPKI or PKCS#1, that verifies your RS256 JWTs; never send a ' +
    'private key. `allowedOrigins` lists exact origins (`https://host[:port]`, at most 50). `workspaceId` defaults to a workspace ' +
    "key's own; organization keys must pass it. With `url` (and optional `name`), a webpage markup is created with the installation, " +
    'charged to the monthly allowance (402 when it is used up, and then nothing is created).',
  auth: 'apiKey',
  permission: 'installation:manage',
  body: CreateInstallationBody,
  responses: [{ status: 200, description: 'The new installation', schema: InstallationSchema }],
  handle: async ({ principal, body }) => ok(toPublicInstallation(await createInstallation(principal, body))),
});
