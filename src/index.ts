export { checkout } from './checkout.js';
export type {
  CheckoutOptions,
  CheckoutSummary,
  FilesystemInfo,
  FsyncMode,
  FsyncSummary,
  Progress,
} from './checkout.js';
export { PcheckoutError, ErrorCodes } from './errors.js';
export type { ErrorCode } from './errors.js';
