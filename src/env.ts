export function requireEnv(name: string): string {
  const value = Deno.env.get(name);
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

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
