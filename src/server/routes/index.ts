/**
 * The HTTP routes, one file per feature. Invariants: a handler reads the caller from
 * `c.var.principal` (set by authentication), checks its role first, and reaches a run only
 * through `visibleRun`; errors are thrown, never answered by hand, so every one has the same shape.
 */
export { runRoutes } from './runs.js';
export { approvalRoutes } from './approvals.js';
export { eventRoutes } from './events.js';
export { metaRoutes } from './meta.js';
export { rerunRoutes } from './reruns.js';
export { scheduleRoutes } from './schedules.js';
