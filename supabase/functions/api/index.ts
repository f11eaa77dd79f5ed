import { createApi } from "../../../src/app.ts";
import { createAccessTokenVerifier } from "../../../src/auth/access-token.ts";
import { createSupabaseAuth } from "../../../src/auth/supabase-auth.ts";
import { createDb } from "../../../src/db/database.ts";
import { createPool } from "../../../src/db/pool.ts";
import { jsonLogger, requireEnv } from "../../../src/env.ts";

const now = () => Date.now();
const supabaseUrl = requireEnv("SUPABASE_URL");
// Hosted functions reach Auth through the project URL; the local stack names it directly.
const authUrl = `${(Deno.env.get("AUTH_URL") ?? `${supabaseUrl}/auth/v1`).replace(/\/$/, "")}/`;

const sql = createPool(requireEnv("SUPABASE_DB_URL"), { applicationName: "pms-api", generatedTypes: true });

const api = createApi({
  sql,
  db: createDb(sql),
  identity: createSupabaseAuth({ url: authUrl, apiKey: requireEnv("SUPABASE_ANON_KEY"), fetch, now }),
  verifyAccessToken: createAccessTokenVerifier({ jwtSecret: requireEnv("AUTH_JWT_SECRET"), now }),
  logger: jsonLogger,
});

Deno.serve(api);
