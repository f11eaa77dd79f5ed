// Prints a fresh stack.env: an HS256 JWT secret and the anon and service_role
// API keys signed with it, shaped like the keys `supabase start` prints.
import { base64url, signHs256 } from "./jwt.ts";

const secret = base64url(crypto.getRandomValues(new Uint8Array(48)));
const issuedAt = Math.floor(Date.now() / 1000);
const tenYears = 10 * 365 * 24 * 3600;
const apiKey = (role: string) => signHs256({ iss: "supabase-local", role, iat: issuedAt, exp: issuedAt + tenYears }, secret);

console.log(`JWT_SECRET=${secret}`);
console.log(`ANON_KEY=${await apiKey("anon")}`);
console.log(`SERVICE_ROLE_KEY=${await apiKey("service_role")}`);
