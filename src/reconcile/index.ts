export { reconcileInto, type ReconcileOptions, type ReconcileReport, type Repair, type CampaignReport } from './reconcile.js';
export { compareCandidate, compareCampaign, compareCredits } from './compare.js';
export { scheduleReconcile, type ReconcileSchedule } from './schedule.js';
