// Auth's schema in the database, made as Supabase Auth makes its own when it starts: by
// the double, as supabase_auth_admin, once, under a lock so that two doubles starting
// together (the stack's and a test's own) make it once between them. Its version names
// the revision of local/auth/schema.sql; a database holding another is reset first.
import type { Sql } from "./store.ts";

export const SCHEMA_VERSION = "20260812000000";
const SCHEMA_FILE = new URL("./schema.sql", import.meta.url);

export async function ensureAuthSchema(sql: Sql): Promise<"created" | "present"> {
  return await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('local auth double schema'))`;
    const [state] = await tx<{ present: boolean }[]>`select to_regclass('auth.schema_migrations') is not null as present`;
    if (state!.present) {
      const versions = await tx<{ version: string }[]>`select version from auth.schema_migrations`;
      if (versions.some((row) => row.version === SCHEMA_VERSION)) return "present";
      throw new Error(
        `the auth schema holds versions ${versions.map((row) => row.version).join(", ") || "none"}, not the double's ` +
          `${SCHEMA_VERSION}: reset the database (scripts/stack.sh reset)`,
      );
    }
    await tx.unsafe(await Deno.readTextFile(SCHEMA_FILE));
    await tx`insert into auth.schema_migrations (version) values (${SCHEMA_VERSION})`;
    return "created";
  });
}
