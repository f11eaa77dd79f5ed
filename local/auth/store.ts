// The Auth double's rows in the `auth` schema (local/auth/schema.sql), read and written as
// Supabase Auth reads and writes them, and the user as Auth's API shows it. The double
// connects as supabase_auth_admin, the owner of the schema, as Auth does.
import postgres from "postgres";

export type Sql = postgres.Sql;
// A transaction's handle: the statements of one request that must hold together.
export type Tx = postgres.TransactionSql;
export type Db = Sql | Tx;

// Auth keeps every user of a project under the nil instance.
export const INSTANCE_ID = "00000000-0000-0000-0000-000000000000";

type Json = Record<string, unknown>;

// Timestamps travel as Postgres prints them in UTC ("2026-12-01 10:00:00.123456+00") and
// are shown as Auth shows them: RFC 3339, the fraction without trailing zeros.
export type Timestamp = string;

export type UserRow = {
  id: string;
  aud: string | null;
  role: string | null;
  email: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Timestamp | null;
  invited_at: Timestamp | null;
  confirmation_sent_at: Timestamp | null;
  recovery_sent_at: Timestamp | null;
  email_change: string | null;
  email_change_sent_at: Timestamp | null;
  last_sign_in_at: Timestamp | null;
  raw_app_meta_data: Json | null;
  raw_user_meta_data: Json | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  phone: string | null;
  phone_confirmed_at: Timestamp | null;
  phone_change: string | null;
  phone_change_sent_at: Timestamp | null;
  confirmed_at: Timestamp | null;
  banned_until: Timestamp | null;
  reauthentication_sent_at: Timestamp | null;
  is_sso_user: boolean;
  deleted_at: Timestamp | null;
  is_anonymous: boolean;
};

export type IdentityRow = {
  id: string;
  provider_id: string;
  user_id: string;
  identity_data: Json;
  provider: string;
  last_sign_in_at: Timestamp | null;
  created_at: Timestamp | null;
  updated_at: Timestamp | null;
  email: string | null;
};

export type SessionRow = {
  id: string;
  user_id: string;
  created_at: Timestamp | null;
  not_after: Timestamp | null;
  aal: string | null;
};

export type RefreshTokenRow = {
  id: string;
  token: string;
  user_id: string | null;
  revoked: boolean | null;
  updated_at: Timestamp | null;
  parent: string | null;
  session_id: string | null;
};

export function connect(url: string): Sql {
  return postgres(url, {
    max: 10,
    onnotice: () => {},
    connection: { application_name: "auth-double", TimeZone: "UTC" },
    // Timestamps read as text: Postgres keeps microseconds, which a Date would drop.
    types: {
      timestamps: {
        to: 1184,
        from: [1114, 1184],
        serialize: (value: Date | string) => value instanceof Date ? value.toISOString() : value,
        parse: (value: string) => value,
      },
    },
  });
}

export function rfc3339(value: Timestamp): string;
export function rfc3339(value: Timestamp | null): string | null;
export function rfc3339(value: Timestamp | null): string | null {
  if (value === null) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(?:([+-]\d{2})(?::?(\d{2}))?)?$/.exec(value);
  if (!match) return value;
  const [, date, time, fraction = "", hours, minutes] = match;
  const trimmed = fraction.replace(/0+$/, "");
  const zone = hours === undefined || (Number(hours) === 0 && Number(minutes ?? 0) === 0) ? "Z" : `${hours}:${minutes ?? "00"}`;
  return `${date}T${time}${trimmed ? `.${trimmed}` : ""}${zone}`;
}

// Whether the user is banned at `now`.
export function isBanned(user: UserRow, now: Date): boolean {
  return user.banned_until !== null && new Date(rfc3339(user.banned_until)).getTime() > now.getTime();
}

// The user as Auth's API shows it: the fields in Auth's order, the optional ones only
// when set, `email` and `phone` always as strings.
export function userJson(user: UserRow, identities: IdentityRow[] | null): Json {
  const optional = (name: string, value: string | null) => value === null || value === "" ? {} : { [name]: value };
  return {
    id: user.id,
    aud: user.aud ?? "",
    role: user.role ?? "",
    email: user.email ?? "",
    ...optional("email_confirmed_at", rfc3339(user.email_confirmed_at)),
    ...optional("invited_at", rfc3339(user.invited_at)),
    phone: user.phone ?? "",
    ...optional("phone_confirmed_at", rfc3339(user.phone_confirmed_at)),
    ...optional("confirmation_sent_at", rfc3339(user.confirmation_sent_at)),
    ...optional("confirmed_at", rfc3339(user.confirmed_at)),
    ...optional("recovery_sent_at", rfc3339(user.recovery_sent_at)),
    ...optional("new_email", user.email_change),
    ...optional("email_change_sent_at", rfc3339(user.email_change_sent_at)),
    ...optional("new_phone", user.phone_change),
    ...optional("phone_change_sent_at", rfc3339(user.phone_change_sent_at)),
    ...optional("reauthentication_sent_at", rfc3339(user.reauthentication_sent_at)),
    ...optional("last_sign_in_at", rfc3339(user.last_sign_in_at)),
    app_metadata: user.raw_app_meta_data ?? {},
    user_metadata: user.raw_user_meta_data ?? {},
    identities: identities === null ? null : identities.map(identityJson),
    created_at: rfc3339(user.created_at) ?? "",
    updated_at: rfc3339(user.updated_at) ?? "",
    ...optional("banned_until", rfc3339(user.banned_until)),
    ...optional("deleted_at", rfc3339(user.deleted_at)),
    is_anonymous: user.is_anonymous,
  };
}

function identityJson(identity: IdentityRow): Json {
  return {
    identity_id: identity.id,
    id: identity.provider_id,
    user_id: identity.user_id,
    identity_data: identity.identity_data,
    provider: identity.provider,
    ...(identity.last_sign_in_at ? { last_sign_in_at: rfc3339(identity.last_sign_in_at) } : {}),
    created_at: rfc3339(identity.created_at) ?? "",
    updated_at: rfc3339(identity.updated_at) ?? "",
    ...(identity.email ? { email: identity.email } : {}),
  };
}

const USER_COLUMNS = [
  "id", "aud", "role", "email", "encrypted_password", "email_confirmed_at", "invited_at", "confirmation_sent_at",
  "recovery_sent_at", "email_change", "email_change_sent_at", "last_sign_in_at", "raw_app_meta_data",
  "raw_user_meta_data", "created_at", "updated_at", "phone", "phone_confirmed_at", "phone_change",
  "phone_change_sent_at", "confirmed_at", "banned_until", "reauthentication_sent_at", "is_sso_user", "deleted_at",
  "is_anonymous",
] as const;

export async function userById(db: Db, id: string, forUpdate = false): Promise<UserRow | null> {
  const [user] = forUpdate
    ? await db<UserRow[]>`select ${db(USER_COLUMNS)} from auth.users where id = ${id} for update`
    : await db<UserRow[]>`select ${db(USER_COLUMNS)} from auth.users where id = ${id}`;
  return user ?? null;
}

// A password user's account: by address, in the audience, never an SSO user's.
export async function userByEmail(db: Db, email: string, aud: string): Promise<UserRow | null> {
  const [user] = await db<UserRow[]>`
    select ${db(USER_COLUMNS)} from auth.users
    where instance_id = ${INSTANCE_ID} and lower(email) = ${email.toLowerCase()} and aud = ${aud} and is_sso_user = false`;
  return user ?? null;
}

export async function emailTaken(db: Db, email: string, aud: string, exceptUserId: string | null): Promise<boolean> {
  const [row] = await db<{ taken: boolean }[]>`
    select exists (
      select from auth.users
      where lower(email) = ${email.toLowerCase()} and aud = ${aud} and is_sso_user = false
        and (${exceptUserId}::uuid is null or id <> ${exceptUserId}::uuid)
    ) or exists (
      select from auth.identities i join auth.users u on u.id = i.user_id
      where i.email = ${email.toLowerCase()} and i.provider <> 'sso' and u.aud = ${aud} and u.is_sso_user = false
        and (${exceptUserId}::uuid is null or i.user_id <> ${exceptUserId}::uuid)
    ) as taken`;
  return row!.taken;
}

export async function identitiesOf(db: Db, userId: string): Promise<IdentityRow[]> {
  return await db<IdentityRow[]>`
    select id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at, email
    from auth.identities where user_id = ${userId} order by created_at, id`;
}

export type NewUser = {
  id: string;
  aud: string;
  role: string;
  email: string;
  passwordHash: string | null;
  appMetadata: Json;
  userMetadata: Json;
  confirmedAt: Date | null;
  confirmationSentAt: Date | null;
  bannedUntil: Date | null;
  now: Date;
};

export async function insertUser(db: Db, user: NewUser): Promise<void> {
  await db`
    insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
      confirmation_sent_at, raw_app_meta_data, raw_user_meta_data, banned_until, created_at, updated_at,
      confirmation_token, recovery_token, email_change_token_new, email_change)
    values (${INSTANCE_ID}, ${user.id}, ${user.aud}, ${user.role}, ${user.email}, ${user.passwordHash},
      ${user.confirmedAt}, ${user.confirmationSentAt}, ${db.json(user.appMetadata as postgres.JSONValue)},
      ${db.json(user.userMetadata as postgres.JSONValue)}, ${user.bannedUntil}, ${user.now}, ${user.now}, '', '', '', '')`;
}

// The email identity every password user has: its provider id is the user's id.
export async function insertEmailIdentity(db: Db, userId: string, identityData: Json, now: Date): Promise<void> {
  await db`
    insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
    values (${userId}, ${userId}, ${db.json(identityData as postgres.JSONValue)}, 'email', ${now}, ${now}, ${now})`;
}

export async function updateUser(db: Db, id: string, changes: Record<string, unknown>): Promise<void> {
  const values = Object.fromEntries(Object.entries(changes).map(([column, value]) => [
    column,
    value !== null && typeof value === "object" && !(value instanceof Date) ? db.json(value as postgres.JSONValue) : value,
  ]));
  await db`update auth.users set ${db(values as Record<string, postgres.ParameterOrJSON<never>>)} where id = ${id}`;
}

// Auth's merge of metadata: each key given replaces the stored one, a null removes it,
// the rest stay.
export function mergeMetadata(stored: Json | null, update: Json): Json {
  const merged: Json = { ...(stored ?? {}) };
  for (const [key, value] of Object.entries(update)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

export async function sessionById(db: Db, id: string, forUpdate = false): Promise<SessionRow | null> {
  const [session] = forUpdate
    ? await db<SessionRow[]>`select id, user_id, created_at, not_after, aal from auth.sessions where id = ${id} for update`
    : await db<SessionRow[]>`select id, user_id, created_at, not_after, aal from auth.sessions where id = ${id}`;
  return session ?? null;
}

export type ClientInfo = { ip: string | null; userAgent: string | null };

export async function insertSession(db: Db, userId: string, client: ClientInfo, now: Date): Promise<string> {
  const id = crypto.randomUUID();
  await db`
    insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent, ip)
    values (${id}, ${userId}, ${now}, ${now}, 'aal1', ${client.userAgent}, ${client.ip}::inet)`;
  return id;
}

export async function touchSession(db: Db, id: string, client: ClientInfo, now: Date): Promise<void> {
  await db`
    update auth.sessions
    set refreshed_at = ${now.toISOString()}::timestamptz at time zone 'UTC', updated_at = ${now},
        user_agent = ${client.userAgent}, ip = ${client.ip}::inet
    where id = ${id}`;
}

// The authentication methods a session was established with, oldest first, as the
// access token's amr claim lists them.
export async function amrOf(db: Db, sessionId: string): Promise<{ method: string; timestamp: number }[]> {
  const rows = await db<{ method: string; timestamp: number }[]>`
    select authentication_method as method, extract(epoch from updated_at)::bigint::int as timestamp
    from auth.mfa_amr_claims where session_id = ${sessionId} order by updated_at, authentication_method`;
  return rows.map(({ method, timestamp }) => ({ method, timestamp }));
}

export async function addAmr(db: Db, sessionId: string, method: string, now: Date): Promise<void> {
  await db`
    insert into auth.mfa_amr_claims (id, session_id, authentication_method, created_at, updated_at)
    values (${crypto.randomUUID()}, ${sessionId}, ${method}, ${now}, ${now})
    on conflict on constraint mfa_amr_claims_session_id_authentication_method_pkey
    do update set updated_at = excluded.updated_at`;
}

// Auth's legacy refresh tokens: 12 characters of lower-case base32.
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
export function newRefreshToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return [...bytes].map((byte) => BASE32[byte % 32]).join("");
}

export async function insertRefreshToken(
  db: Db,
  userId: string,
  sessionId: string,
  parent: string | null,
  now: Date,
): Promise<string> {
  const token = newRefreshToken();
  await db`
    insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
    values (${INSTANCE_ID}, ${token}, ${userId}, false, ${now}, ${now}, ${parent ?? ""}, ${sessionId})`;
  return token;
}

export async function refreshTokenForUpdate(db: Db, token: string): Promise<RefreshTokenRow | null> {
  const [row] = await db<RefreshTokenRow[]>`
    select id::text, token, user_id, revoked, updated_at, parent, session_id
    from auth.refresh_tokens where token = ${token} for update`;
  return row ?? null;
}

// The session's token in use: its newest one not revoked.
export async function activeRefreshToken(db: Db, sessionId: string): Promise<RefreshTokenRow | null> {
  const [row] = await db<RefreshTokenRow[]>`
    select id::text, token, user_id, revoked, updated_at, parent, session_id
    from auth.refresh_tokens where session_id = ${sessionId} and revoked = false order by id desc limit 1`;
  return row ?? null;
}

export async function revokeRefreshToken(db: Db, id: string, now: Date): Promise<void> {
  await db`update auth.refresh_tokens set revoked = true, updated_at = ${now} where id = ${id}`;
}

export async function revokeSessionRefreshTokens(db: Db, sessionId: string, now: Date): Promise<void> {
  await db`update auth.refresh_tokens set revoked = true, updated_at = ${now} where session_id = ${sessionId} and revoked = false`;
}

export async function deleteRefreshToken(db: Db, id: string): Promise<void> {
  await db`delete from auth.refresh_tokens where id = ${id}`;
}

// Ends sessions: their refresh tokens and authentication methods go with them.
export async function deleteSessions(db: Db, userId: string, which: { only?: string; except?: string } = {}): Promise<void> {
  if (which.only !== undefined) {
    await db`delete from auth.sessions where user_id = ${userId} and id = ${which.only}`;
  } else if (which.except !== undefined) {
    await db`delete from auth.sessions where user_id = ${userId} and id <> ${which.except}`;
  } else {
    await db`delete from auth.sessions where user_id = ${userId}`;
  }
}

export type AuditEntry = {
  action: string;
  actorId: string;
  actorUsername: string;
  logType: string;
  traits?: Json;
  now: Date;
};

// Auth's audit trail of what happened to an account.
export async function audit(db: Db, entry: AuditEntry): Promise<void> {
  const payload = {
    actor_id: entry.actorId,
    actor_username: entry.actorUsername,
    actor_via_sso: false,
    action: entry.action,
    log_type: entry.logType,
    ...(entry.traits ? { traits: entry.traits } : {}),
  };
  await db`
    insert into auth.audit_log_entries (instance_id, id, payload, created_at, ip_address)
    values (${INSTANCE_ID}, ${crypto.randomUUID()}, ${db.json(payload as postgres.JSONValue)}, ${entry.now}, '')`;
}
