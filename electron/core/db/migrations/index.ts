import type { Database } from "better-sqlite3";
import { migrate0001 } from "./0001-conversations";
import { migrate0002 } from "./0002-settings";
import { migrate0003 } from "./0003-adapters";
import { migrate0004 } from "./0004-feedback";
import { migrate0005 } from "./0005-memory";
import { migrate0006 } from "./0006-releases";
import { migrate0007 } from "./0007-genui";
import { migrate0008 } from "./0008-tool-steps";
import { migrate0009 } from "./0009-feedback-tool-kinds";
import { migrate0010 } from "./0010-search-transcript";
import { migrate0011 } from "./0011-message-tree";
import { migrate0012 } from "./0012-conversation-settings";
import { migrate0013 } from "./0013-search-prefixes";

export interface Migration {
  version: number;
  name: string;
  up: (db: Database) => void;
}

/** Every schema version, in order. Append only: an applied migration is never edited. */
export const migrations: readonly Migration[] = [
  { version: 1, name: "conversations", up: migrate0001 },
  { version: 2, name: "settings", up: migrate0002 },
  { version: 3, name: "adapters", up: migrate0003 },
  { version: 4, name: "feedback", up: migrate0004 },
  { version: 5, name: "memory", up: migrate0005 },
  { version: 6, name: "releases", up: migrate0006 },
  { version: 7, name: "genui", up: migrate0007 },
  { version: 8, name: "tool-steps", up: migrate0008 },
  { version: 9, name: "feedback-tool-kinds", up: migrate0009 },
  { version: 10, name: "search-transcript", up: migrate0010 },
  { version: 11, name: "message-tree", up: migrate0011 },
  { version: 12, name: "conversation-settings", up: migrate0012 },
  { version: 13, name: "search-prefixes", up: migrate0013 },
];

export const LATEST_SCHEMA_VERSION = migrations[migrations.length - 1]?.version ?? 0;
