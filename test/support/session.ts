// Signed-in users for the API's tests. Supabase Auth cannot be built here (issue 2), so
// a test creates what a sign-in leaves behind: the user in auth.users, a row in
// auth.sessions, and an access token with Auth's claims signed with the stack's
// secret. Everything after that is the real path: the gateway, the function, the
// verifier, the session check and RLS.
import postgres from "postgres";
import { signHs256 } from "../../local/jwt.ts";
import { stack } from "./stack.ts";

export type TestUser = { id: string; email: string; sessionId: string; token: string };

export function adminSql(): postgres.Sql {
  return postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
}

export async function createUser(sql: postgres.Sql, label: string): Promise<TestUser> {
  const id = crypto.randomUUID();
  const sessionId = crypto.randomUUID();
  const email = `${label}-${id.slice(0, 8)}@test.example`;
  await sql`
    insert into auth.users (instance_id, id, aud, role, email, encrypted_password, confirmed_at,
                            raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
    values ('00000000-0000-0000-0000-000000000000', ${id}, 'authenticated', 'authenticated', ${email}, '',
            now(), '{"provider":"email"}', ${sql.json({ full_name: label })}, now(), now())`;
  await sql`insert into auth.sessions (id, user_id) values (${sessionId}, ${id})`;
  const issuedAt = Math.floor(Date.now() / 1000);
  const token = await signHs256({
    sub: id,
    session_id: sessionId,
    role: "authenticated",
    aud: "authenticated",
    email,
    aal: "aal1",
    iat: issuedAt,
    exp: issuedAt + 3600,
  }, stack.jwtSecret);
  return { id, email, sessionId, token };
}

export async function endSession(sql: postgres.Sql, user: TestUser): Promise<void> {
  await sql`delete from auth.sessions where id = ${user.sessionId}`;
}
