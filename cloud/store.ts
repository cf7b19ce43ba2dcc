/**
 * The SQLite store under its old name, for the code that reads it directly (cloud/prepare,
 * the in-process test harnesses). The store interface and both engines live in cloud/store/.
 */
export { CLOUD_DB_FILE, SqliteStore as FeedbackStore } from "./store/sqlite-store";
export type { StoredItem } from "./store/store";
