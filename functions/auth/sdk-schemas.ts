import * as v from 'valibot';
import { browserOrigin } from '../../shared/domain/installations/input.js';
import { Id } from '../../shared/http/schemas.js';
import { ExchangeSchema, PublicKey } from './schemas.js';

/** An unguessable nonce of the client's: long enough not to be guessed, short enough to stay a key. */
const State = v.pipe(
  v.string(),
  v.minLength(16, 'must be at least 16 characters (an unguessable random nonce)'),
  v.maxLength(256, 'must be at most 256 characters'),
  v.regex(/^[A-Za-z0-9._~-]+$/, 'must use only letters, digits and - . _ ~'),
);

const SdkOrigin = v.pipe(
  v.string(),
  v.check(
    (value) => browserOrigin(value) !== undefined,
    'must be an origin as browsers send it: lower-case http(s)://host[:port], no path or trailing slash',
  ),
);

export const SdkExchangeBody = v.object({ publicKey: PublicKey, markupId: Id, sdkOrigin: SdkOrigin, state: v.optional(State) });

export const SdkExchangeResultQuery = v.object({ state: State, publicKey: PublicKey, markupId: Id });

/** What the customer exchange answers, without `markupId` (an SDK token is always bound to the one asked for), and the SDK's extras. */
export const SdkExchangeSchema = v.object({
  ...v.omit(ExchangeSchema, ['markupId']).entries,
  validatedSdkOrigin: v.string(),
  name: v.string(),
});
