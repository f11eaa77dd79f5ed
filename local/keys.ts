// Prints a fresh stack.env: an HS256 JWT secret and the anon and service_role
// API keys signed with it, shaped like the keys `supabase start` prints.
const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function sign(payload: Record<string, unknown>, secret: string): Promise<string> {
  const header = base64url(encoder.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${header}.${body}`)));
  return `${header}.${body}.${base64url(signature)}`;
}

const secret = base64url(crypto.getRandomValues(new Uint8Array(48)));
const issuedAt = Math.floor(Date.now() / 1000);
const tenYears = 10 * 365 * 24 * 3600;
const apiKey = (role: string) => sign({ iss: "supabase-local", role, iat: issuedAt, exp: issuedAt + tenYears }, secret);

console.log(`JWT_SECRET=${secret}`);
console.log(`ANON_KEY=${await apiKey("anon")}`);
console.log(`SERVICE_ROLE_KEY=${await apiKey("service_role")}`);
