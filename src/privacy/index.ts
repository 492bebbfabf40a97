export { eraseCandidate, ErasureRequestError, UnknownCandidateError, type EraseOptions, type ErasureReport } from './erase.js';
export { exportCandidate, exportPerson, type CandidateExport, type StoredEventExport } from './export.js';
export { eraseInactive, parseDuration, type RetentionOptions, type RetentionReport } from './retention.js';
export { createErasureHooks, type EraseHook, type EraseHookContext, type ErasedCandidate } from './hooks.js';
