export { reconcileInto, PROGRESS_SETTING, type ReconcileOptions, type ReconcileReport, type ReconcileParts, type Repair, type CampaignReport } from './reconcile.js';
export { compareCandidate, compareCampaign, compareCredits, type Fields, type FieldDifference } from './compare.js';
export { scheduleReconcile, type ReconcileSchedule } from './schedule.js';
