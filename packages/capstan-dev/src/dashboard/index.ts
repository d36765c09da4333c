/**
 * The dashboard `capstan dev` serves: see dashboard.ts. What the CLI (and tests) use of it.
 */
export { type Dashboard, type DashboardOptions, DEFAULT_DASHBOARD_HOST, startDashboard } from "./dashboard.ts";
export { LOG_RING_SIZE, LogFeed, type LogFilter, type LogLine } from "./log-feed.ts";
export { RUNS_PER_OBJECT, RUNS_TOTAL, type RunFilter, RunStore, type StoredRun } from "./run-store.ts";
