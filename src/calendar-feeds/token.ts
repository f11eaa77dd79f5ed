// A calendar feed's token: 256 random bits, base64url, in its URL and nowhere else; the
// database keeps its SHA-256 (hex here, as SQL's decode(…, 'hex') takes it).
import { randomSecret, sha256Hex } from "../api-keys/secret.ts";

export type IssuedFeedToken = { token: string; lastFour: string; hashHex: string };

export function issueFeedToken(): IssuedFeedToken {
  const token = randomSecret();
  return { token, lastFour: token.slice(-4), hashHex: sha256Hex(token) };
}
