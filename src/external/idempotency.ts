import { sql, type Transaction } from "kysely";
import { sha256Hex } from "../api-keys/secret.ts";
import type { DB } from "../db/database.ts";
import { HttpError } from "../http/problem.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
// Set on an answer that repeats an earlier one instead of doing the work again.
export const REPLAYED_HEADER = "idempotent-replayed";

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// What a replay repeats besides the body; the rest belongs to the moment.
const REPLAYED_HEADERS = ["content-type", "etag", "location", "preference-applied"];

export function idempotencyKeyOf(request: Request): string | null {
  const value = request.headers.get(IDEMPOTENCY_HEADER);
  if (value === null) return null;
  if (!KEY_PATTERN.test(value)) {
    throw new HttpError("validation", "Idempotency-Key must be 1 to 255 visible ASCII characters, like a UUID.", {
      errors: [{ path: "Idempotency-Key", message: "1 to 255 visible ASCII characters." }],
    });
  }
  return value;
}

// Hex, as the table's encode(request_hash, 'hex') reads it back.
export function requestHash(operationId: string, input: unknown): string {
  return sha256Hex(JSON.stringify({ operationId, input }));
}

// Claims the key for this request, or finds it is taken: a concurrent request with the
// same key waits here for the first to commit (then replays it) or roll back (then claims).
// A key older than 24 hours is claimed afresh.
async function claim(db: Transaction<DB>, key: string, hash: string): Promise<boolean> {
  const { rows } = await sql<{ claimed: boolean }>`
    insert into public.idempotency_keys as k (key, request_hash) values (${key}, decode(${hash}, 'hex'))
    on conflict (tenant_id, api_key_id, key) do update
      set request_hash = excluded.request_hash, response_status = null, response_headers = '{}',
          response_body = null, created_at = now()
      where k.created_at <= now() - interval '24 hours'
    returning true as claimed`.execute(db);
  return rows.length > 0;
}

type Stored = { requestHash: string; status: number | null; headers: string; body: string | null };

async function stored(db: Transaction<DB>, key: string): Promise<Stored | undefined> {
  const { rows: [row] } = await sql<Stored>`
    select encode(request_hash, 'hex') as "requestHash", response_status as status, response_headers::text as headers,
           response_body as body
    from public.idempotency_keys where key = ${key}`.execute(db);
  return row;
}

async function keep(db: Transaction<DB>, key: string, response: Response, body: string | null): Promise<void> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  await sql`update public.idempotency_keys
            set response_status = ${response.status}, response_headers = ${JSON.stringify(headers)}::text::jsonb,
                response_body = ${body}
            where key = ${key}`.execute(db);
}

// Runs `work` once per key: its answer is kept with the claim, in the request's
// transaction, and a retry with the same key and request gets that answer again.
export async function once(
  db: Transaction<DB>,
  key: string,
  hash: string,
  work: () => Promise<Response>,
): Promise<Response> {
  if (!await claim(db, key, hash)) {
    const first = await stored(db, key);
    if (!first || first.status === null) {
      throw new HttpError("idempotency-key-in-progress", "A request with this Idempotency-Key is still in progress. Retry shortly.");
    }
    if (first.requestHash !== hash) {
      throw new HttpError("idempotency-key-reused", "This Idempotency-Key was used for a different request. Use a new key for a new request.");
    }
    const headers = JSON.parse(first.headers) as Record<string, string>;
    return new Response(first.body, { status: first.status, headers: { ...headers, [REPLAYED_HEADER]: "true" } });
  }
  const response = await work();
  const body = response.body === null ? null : await response.text();
  await keep(db, key, response, body);
  return new Response(body, { status: response.status, headers: response.headers });
}
