export {
  reconcileInto,
  type ReconcileTarget,
  type ReconcileOptions,
  type ReconcileClient,
  type ReconcileReport,
  type Repair,
  type CampaignReport,
} from './reconcile.js';
export type { Fields, FieldDifference } from './compare.js';
export { scheduleReconcile, type ReconcileSchedule } from './schedule.js';
export { reconcileAccounts } from './accounts.js';
