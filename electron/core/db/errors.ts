/** The database was written by a newer Macaron: opening it with this version could damage it. */
export class DatabaseFromFutureError extends Error {
  constructor(
    readonly fileVersion: number,
    readonly appVersion: number,
  ) {
    super(
      `The database was created by a newer version of Macaron (schema ${fileVersion}; this version knows up to ${appVersion}). ` +
        "Update Macaron to open it. The file was left untouched.",
    );
    this.name = "DatabaseFromFutureError";
  }
}

/** The file exists but SQLite cannot read it (not a database, or corrupted). It is never deleted. */
export class DatabaseOpenError extends Error {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Cannot open the database ${path}: ${reason}. The file was left untouched; ` +
        "move it away (or restore a backup) to start with a fresh database.",
      { cause },
    );
    this.name = "DatabaseOpenError";
  }
}
