// A calendar feed's token: 256 random bits, base64url, in its URL and nowhere else; the
// database keeps its SHA-256 (hex here, as SQL's decode(…, 'hex') takes it).
import { Buffer } from "node:buffer";
import { sha256Hex } from "../api-keys/secret.ts";

const TOKEN_BYTES = 32;

export type IssuedFeedToken = { token: string; lastFour: string; hashHex: string };

export function issueFeedToken(): IssuedFeedToken {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))).toString("base64url");
  return { token, lastFour: token.slice(-4), hashHex: sha256Hex(token) };
}

export function feedTokenHash(token: string): string {
  return sha256Hex(token);
}
