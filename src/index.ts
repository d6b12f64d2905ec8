export { checkout } from './checkout.js';
export type { CheckoutOptions, CheckoutSummary, Progress } from './checkout.js';
export { PcheckoutError, ErrorCodes } from './errors.js';
export type { ErrorCode } from './errors.js';
export { verifyPath } from './plan/paths.js';
export type { PathProtection, PathVerdict } from './plan/paths.js';
