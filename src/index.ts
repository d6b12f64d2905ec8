export { checkout, inThisThread, materialize } from './checkout.js';
export type {
  CheckoutOptions,
  Changes,
  CheckoutSummary,
  FilesystemInfo,
  FsyncMode,
  FsyncSummary,
  MaterializeOptions,
  Mode,
  Phase,
  Progress,
  Stops,
  StoreOption,
  StoreSummary,
} from './checkout.js';
export type { RacyDecision, RacyPolicy } from './index/racy.js';
export { PcheckoutError, ErrorCodes } from './errors.js';
export type { ErrorCode } from './errors.js';
export { verifyPath } from './plan/paths.js';
export type { PathProtection, PathVerdict } from './plan/paths.js';
export { createEngine } from './engine.js';
export type { Engine, EngineOptions } from './engine.js';
