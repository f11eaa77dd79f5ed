// Supabase Auth's settings for the local stack, read from supabase/config.toml's [auth]
// section: the file `supabase start` reads, so both ways of running locally share one
// place. Prints NAME='value' lines (GOTRUE_*), for scripts/stack.sh to pass to Auth.
//   settings.ts --config supabase/config.toml
import { parse } from "smol-toml";
import { readFlags, requireFlag } from "../args.ts";

type Table = Record<string, unknown>;

function table(value: unknown, name: string): Table {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`config.toml: [${name}] must be a table`);
  }
  return value as Table;
}

function read<T extends "string" | "number" | "boolean">(
  section: Table,
  name: string,
  type: T,
): T extends "string" ? string : T extends "number" ? number : boolean {
  const value = section[name];
  if (typeof value !== type) throw new Error(`config.toml: auth setting ${name} must be a ${type}`);
  return value as never;
}

// config.toml's password_requirements names, as the character sets Auth requires one of each.
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const SYMBOLS = "!@#$%^&*()_+-=[]{};'\\:\"|<>?,./`~";
const requiredCharacters: Record<string, string> = {
  "": "",
  letters_digits: [LOWER + UPPER, DIGITS].join(":"),
  lower_upper_letters_digits: [LOWER, UPPER, DIGITS].join(":"),
  lower_upper_letters_digits_symbols: [LOWER, UPPER, DIGITS, SYMBOLS].join(":"),
};

const flags = readFlags(Deno.args);
const config = table(parse(await Deno.readTextFile(requireFlag(flags, "config"))), "root");
const auth = table(config.auth, "auth");
const email = table(auth.email, "auth.email");
const rateLimit = table(auth.rate_limit, "auth.rate_limit");

const passwordRequirements = read(auth, "password_requirements", "string");
const characters = requiredCharacters[passwordRequirements];
if (characters === undefined) throw new Error(`config.toml: unknown password_requirements "${passwordRequirements}"`);

const settings: Record<string, string | number | boolean> = {
  GOTRUE_SITE_URL: read(auth, "site_url", "string"),
  GOTRUE_JWT_EXP: read(auth, "jwt_expiry", "number"),
  GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED: read(auth, "enable_refresh_token_rotation", "boolean"),
  GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: read(auth, "refresh_token_reuse_interval", "number"),
  GOTRUE_DISABLE_SIGNUP: !read(auth, "enable_signup", "boolean"),
  GOTRUE_PASSWORD_MIN_LENGTH: read(auth, "minimum_password_length", "number"),
  GOTRUE_PASSWORD_REQUIRED_CHARACTERS: characters,
  GOTRUE_EXTERNAL_EMAIL_ENABLED: read(email, "enabled", "boolean"),
  GOTRUE_MAILER_AUTOCONFIRM: !read(email, "enable_confirmations", "boolean"),
  GOTRUE_RATE_LIMIT_EMAIL_SENT: read(rateLimit, "email_sent", "number"),
  GOTRUE_RATE_LIMIT_TOKEN_REFRESH: read(rateLimit, "token_refresh", "number"),
  GOTRUE_RATE_LIMIT_OTP: read(rateLimit, "sign_in_sign_ups", "number"),
  GOTRUE_RATE_LIMIT_VERIFY: read(rateLimit, "token_verifications", "number"),
};

for (const [name, value] of Object.entries(settings)) {
  // Single-quoted for the shell; a quote inside becomes '\''.
  console.log(`${name}='${String(value).replaceAll("'", `'\\''`)}'`);
}
