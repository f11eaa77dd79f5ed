// Passwords as Supabase Auth keeps and judges them: bcrypt at cost 10 (bcryptjs, whose
// hashes and checks are bcrypt's own: a hash made by pgcrypto's crypt() or by Auth checks
// here, and the other way round), at most 72 bytes, and the project's strength rules.
import bcrypt from "bcryptjs";
import type { PasswordRules } from "./config.ts";
import { badRequest, weakPassword } from "./errors.ts";

const COST = 10;
const MAX_BYTES = 72;

export async function hashPassword(password: string): Promise<string> {
  // Auth's hashes are $2a$ (Go's bcrypt); bcryptjs names the same algorithm $2b$.
  const salt = (await bcrypt.genSalt(COST)).replace(/^\$2b\$/, "$2a$");
  return await bcrypt.hash(password, salt);
}

export async function passwordMatches(password: string, hash: string | null): Promise<boolean> {
  if (!hash || !/^\$2[aby]\$\d\d\$/.test(hash)) return false;
  return await bcrypt.compare(password, hash);
}

// Throws Auth's refusal of a password: over 72 bytes is a 400; too short or missing a
// required kind of character a 422 weak_password naming each reason. Lengths are in bytes,
// as Auth counts them.
export function checkPasswordStrength(password: string, rules: PasswordRules): void {
  const bytes = new TextEncoder().encode(password).length;
  if (bytes > MAX_BYTES) throw badRequest("validation_failed", `Password cannot be longer than ${MAX_BYTES} characters`);
  const messages: string[] = [];
  const reasons: string[] = [];
  if (bytes < rules.minLength) {
    messages.push(`Password should be at least ${rules.minLength} characters.`);
    reasons.push("length");
  }
  const missing = rules.requiredCharacters.some((set) => ![...set].some((character) => password.includes(character)));
  if (missing) {
    messages.push(`Password should contain at least one character of each: ${rules.requiredCharacters.join(", ")}.`);
    reasons.push("characters");
  }
  if (reasons.length > 0) throw weakPassword(messages, reasons);
}
