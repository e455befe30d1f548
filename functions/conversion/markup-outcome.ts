/**
 * The conversion worker's outcomes (ready, failed, a dead conversion reopened) are the domain's:
 * shared/domain/markups/conversion-outcome.ts. This module only names them for the worker's files
 * (convert-markup.ts, dead-letters.ts) and the tests that drive them.
 */
export {
  diedWithOriginal,
  INTERNAL_FAILURE_MESSAGE,
  markFailed,
  markReady,
  reopenDeadConversion,
  type Converted,
} from '../../shared/domain/markups/conversion-outcome.js';
