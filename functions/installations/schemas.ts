import * as v from 'valibot';
import { checkOrigin, checkSigningKey, MAX_ALLOWED_ORIGINS, type Checked } from '../../shared/domain/installations/input.js';
import { Cursor, HttpUrl, Id, Name, pageSchema, queryInteger } from '../../shared/http/schemas.js';
import { InstallationSchema } from '../../shared/schemas/installations.js';

export { InstallationSchema } from '../../shared/schemas/installations.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Far above any RSA public key in PEM (a 16384-bit one is about 2.8 KB). */
const MAX_SIGNING_KEY_LENGTH = 16_384;

/** A string checked by a domain rule, answered normalised; the rule's sentence becomes the field's problem. */
function checkedString(check: (text: string) => Checked) {
  return v.rawTransform<string, string>(({ dataset, addIssue, NEVER }) => {
    const checked = check(dataset.value);
    if ('problem' in checked) {
      addIssue({ message: checked.problem });
      return NEVER;
    }
    return checked.value;
  });
}

/** The reference's example `signingKey`: a real 2048-bit RSA public key (its private half was never kept), so the example passes. */
const EXAMPLE_SIGNING_KEY = [
  '-----BEGIN PUBLIC KEY-----',
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwpt1hQOXbpwgEXN9wm4U',
  '2bs8ooyc0txtH8NC86bnvp6HlBB2+2qoKjFAsDK+7OvDe6m4VeV8X83mqFrWbCIu',
  'PMqpezz1HYRX2aL0ipTExap+q2vhEgrofivAgzbCwgGYoPPzRL0INrZ8Y/bNk5Cf',
  'o2TawIgLxhup2C87zaRVXIqWzERHfnsaaJ9UX0tbu9QzlYkuKtZWvSGEYcwbb57l',
  'zOlWFhG2mZnKf9uFn+BSD8J7bYjzl/pUZikGa9P5dC6iS9wG3vmuW0lUXDpiF4r1',
  'DIT+UeF87Sx/RZFSwNqkS/5jmOUmcexeFqvSlOj8K7iK8IYLzFj2WJ9fIUPbtkBK',
  'NwIDAQAB',
  '-----END PUBLIC KEY-----',
  '',
].join('\n');

const SigningKey = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_SIGNING_KEY_LENGTH, `must be at most ${MAX_SIGNING_KEY_LENGTH} characters`),
  v.examples([EXAMPLE_SIGNING_KEY]),
  checkedString(checkSigningKey),
);

/** `https://` + a 253-character host name + `:65535`, with room to spare. */
const MAX_ORIGIN_LENGTH = 300;

const Origin = v.pipe(
  v.string(),
  v.maxLength(MAX_ORIGIN_LENGTH, `must be at most ${MAX_ORIGIN_LENGTH} characters`),
  checkedString(checkOrigin),
);

export const CreateInstallationBody = v.object({
  workspaceId: v.optional(Id),
  signingKey: SigningKey,
  allowedOrigins: v.optional(
    v.nullable(v.pipe(v.array(Origin), v.maxLength(MAX_ALLOWED_ORIGINS, `must list at most ${MAX_ALLOWED_ORIGINS} origins`))),
  ),
  url: v.optional(HttpUrl),
  name: v.optional(Name),
});

export const InstallationIdParams = v.object({ id: Id });

export const ListInstallationsQuery = v.object({
  workspaceId: v.optional(Id),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
  before: v.optional(Cursor),
});

/** GET /installations pages forward only (`before=<nextCursor>`). */
export const InstallationPageSchema = pageSchema(InstallationSchema, { prevCursor: false });
