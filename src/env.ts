export function requireEnv(name: string): string {
  const value = Deno.env.get(name);
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export const jsonLogger = {
  error(message: string, fields: Record<string, unknown> = {}) {
    console.error(JSON.stringify({ level: "error", message, ...fields }));
  },
  warn(message: string, fields: Record<string, unknown> = {}) {
    console.warn(JSON.stringify({ level: "warn", message, ...fields }));
  },
};
