/**
 * The inspector page, served at `/inspector/`. Invariants: its files come from the package's own
 * `inspector/` folder, whatever the working directory; every answer carries a
 * `Content-Security-Policy` that keeps the page to its own origin; it needs no authentication
 * itself (the data behind it does).
 */
export { inspectorRoutes, INSPECTOR_HEADERS } from './inspector-routes.js';
export { findInspectorDir } from './inspector-files.js';
