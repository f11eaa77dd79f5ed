// The local stack's stand-in for Supabase Auth: a double of its HTTP API (local/auth/server.ts)
// over Auth's own tables in the `auth` schema, which it makes at start as Auth runs its
// migrations (local/auth/schema.sql). It reads Auth's own environment variables (GOTRUE_*,
// PORT, API_EXTERNAL_URL; local/auth/config.ts), so the stack gives it what it would give
// Auth, and logs a JSON line per request as Auth does, never a body, header or query.
//   main.ts            serve
//   main.ts migrate    make the schema and exit (a database no Auth serves)
import { ConfigError, readConfig } from "./config.ts";
import { createKeys } from "./keys.ts";
import { ensureAuthSchema } from "./schema.ts";
import { createAuthDouble } from "./server.ts";
import { connect } from "./store.ts";

const log = (fields: Record<string, unknown>) => console.log(JSON.stringify({ ...fields, time: new Date().toISOString() }));

let config;
try {
  config = readConfig(Deno.env.toObject());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`auth double: ${error.message}`);
  Deno.exit(2);
}
const sql = connect(config.databaseUrl);
const schema = await ensureAuthSchema(sql);
if (Deno.args[0] === "migrate") {
  await sql.end();
  Deno.exit(0);
}
log({ level: "info", msg: `auth schema ${schema}` });
const handle = createAuthDouble({ config, sql, keys: await createKeys(config.jwt), now: () => new Date(), log });

const server = Deno.serve({
  hostname: config.host,
  port: config.port,
  onListen: ({ hostname, port }) => log({ level: "info", msg: `Auth double API started on: ${hostname}:${port}` }),
}, (request, info) => handle(request, info.remoteAddr.transport === "tcp" ? info.remoteAddr.hostname : null));

Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  await sql.end({ timeout: 2 });
  Deno.exit(0);
});
