export { eraseCandidate, ErasureRequestError, UnknownCandidateError, type EraseOptions, type ErasureReport } from './erase.js';
export { exportCandidate, type CandidateExport, type StoredEventExport } from './export.js';
