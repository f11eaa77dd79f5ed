// What the code logs through: the functions' entrypoints pass jsonLogger, tests pass a
// recorder. Below every other layer, so the database layer can report what it absorbs.
export type Logger = {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
};

// One JSON object a line, on standard error for problems and standard output for the
// rest: what the platform keeps as the function's logs. Never a secret in `fields`.
export const jsonLogger = {
  info(message: string, fields: Record<string, unknown> = {}) {
    console.log(JSON.stringify({ level: "info", message, ...fields }));
  },
  error(message: string, fields: Record<string, unknown> = {}) {
    console.error(JSON.stringify({ level: "error", message, ...fields }));
  },
  warn(message: string, fields: Record<string, unknown> = {}) {
    console.warn(JSON.stringify({ level: "warn", message, ...fields }));
  },
};
