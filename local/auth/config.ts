// The Auth double's settings, read from the environment variables Supabase Auth itself
// reads (GOTRUE_*, PORT, API_EXTERNAL_URL), with Auth's defaults: the stack writes one
// file of them (.stack/auth.env) for whichever Auth runs, and a test's own Auth process
// changes a few. A setting the double cannot honour stops it at start, rather than
// being ignored.
export type PasswordRules = {
  minLength: number;
  // Each a set of characters of which the password must hold one.
  requiredCharacters: string[];
};

// A token bucket: `perSecond` refill, `burst` at most.
export type RateLimit = { perSecond: number; burst: number };

export type AuthConfig = {
  host: string;
  port: number;
  databaseUrl: string;
  jwt: {
    secret: string;
    // GOTRUE_JWT_KEYS: private JWKs; the one with "sign" in key_ops signs.
    keys: JsonWebKey[];
    keyId: string | null;
    issuer: string | null;
    audience: string;
    expirySeconds: number;
    defaultRole: string;
    adminRoles: string[];
    validMethods: string[] | null;
  };
  siteUrl: string;
  disableSignup: boolean;
  emailEnabled: boolean;
  autoconfirm: boolean;
  password: PasswordRules;
  refreshTokenRotation: boolean;
  refreshTokenReuseIntervalSeconds: number;
  rateLimit: {
    header: string | null;
    token: RateLimit;
    signups: RateLimit;
    user: RateLimit;
    emailSentPerHour: number;
  };
  corsAllowedHeaders: string[];
  logLevel: "debug" | "info" | "warn" | "error";
};

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string, fallback?: string): string {
  const value = env[name];
  if (value !== undefined && value !== "") return value;
  if (fallback !== undefined) return fallback;
  throw new ConfigError(`${name} is required`);
}

function optional(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === "" ? null : value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = optional(env, name);
  if (value === null) return fallback;
  if (/^(true|1|t)$/i.test(value)) return true;
  if (/^(false|0|f)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, not ${value}`);
}

function number(env: Env, name: string, fallback: number): number {
  const value = optional(env, name);
  if (value === null) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new ConfigError(`${name} must be a number of at least 0, not ${value}`);
  return parsed;
}

function list(value: string | null): string[] {
  return value === null ? [] : value.split(",").map((item) => item.trim()).filter(Boolean);
}

// Auth's required-characters setting: sets separated by ':', a '\:' inside a set is a colon.
export function parseRequiredCharacters(value: string | null): string[] {
  if (value === null) return [];
  const sets: string[] = [];
  let current = "";
  for (let i = 0; i < value.length; i++) {
    const character = value[i]!;
    if (character === "\\" && value[i + 1] === ":") {
      current += ":";
      i++;
    } else if (character === ":") {
      if (current) sets.push(current);
      current = "";
    } else {
      current += character;
    }
  }
  if (current) sets.push(current);
  return sets;
}

// Settings Auth has that the double does not implement: set to anything but their
// default, they would change behaviour the double cannot show.
const UNSUPPORTED: [name: string, isDefault: (value: string) => boolean][] = [
  ["GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION", (value) => value === "0"],
  ["GOTRUE_PASSWORD_HIBP_ENABLED", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_SECURITY_CAPTCHA_ENABLED", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_MFA_ENABLED", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_SESSIONS_TIMEBOX", (value) => value === "0" || value === "0s"],
  ["GOTRUE_SESSIONS_INACTIVITY_TIMEOUT", (value) => value === "0" || value === "0s"],
  ["GOTRUE_SESSIONS_SINGLE_PER_USER", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED", (value) => /^(false|0|f)$/i.test(value)],
  ["GOTRUE_EXTERNAL_PHONE_ENABLED", (value) => /^(false|0|f)$/i.test(value)],
];

const FIVE_MINUTES = 300;

export function readConfig(env: Env): AuthConfig {
  for (const [name, isDefault] of UNSUPPORTED) {
    const value = optional(env, name);
    if (value !== null && !isDefault(value)) {
      throw new ConfigError(`${name}=${value} is not supported by the local Auth double`);
    }
  }
  const keys = optional(env, "GOTRUE_JWT_KEYS");
  let parsedKeys: JsonWebKey[] = [];
  if (keys !== null) {
    try {
      parsedKeys = JSON.parse(keys);
    } catch {
      throw new ConfigError("GOTRUE_JWT_KEYS must be a JSON array of JWKs");
    }
    if (!Array.isArray(parsedKeys)) throw new ConfigError("GOTRUE_JWT_KEYS must be a JSON array of JWKs");
  }
  const levels = ["debug", "info", "warn", "error"] as const;
  const level = text(env, "GOTRUE_LOG_LEVEL", "info").toLowerCase();
  const perFiveMinutes = (name: string, fallback: number): RateLimit => ({
    perSecond: number(env, name, fallback) / FIVE_MINUTES,
    burst: 30,
  });
  return {
    host: text(env, "GOTRUE_API_HOST", "localhost"),
    port: number(env, "PORT", number(env, "API_PORT", 8081)),
    databaseUrl: text(env, "GOTRUE_DB_DATABASE_URL", optional(env, "DATABASE_URL") ?? undefined),
    jwt: {
      secret: text(env, "GOTRUE_JWT_SECRET"),
      keys: parsedKeys,
      keyId: optional(env, "GOTRUE_JWT_KEY_ID"),
      issuer: optional(env, "GOTRUE_JWT_ISSUER"),
      audience: text(env, "GOTRUE_JWT_AUD", "authenticated"),
      expirySeconds: number(env, "GOTRUE_JWT_EXP", 3600),
      defaultRole: text(env, "GOTRUE_JWT_DEFAULT_GROUP_NAME", "authenticated"),
      adminRoles: list(text(env, "GOTRUE_JWT_ADMIN_ROLES", "service_role,supabase_admin")),
      validMethods: optional(env, "GOTRUE_JWT_VALID_METHODS") === null ? null : list(optional(env, "GOTRUE_JWT_VALID_METHODS")),
    },
    siteUrl: text(env, "GOTRUE_SITE_URL"),
    disableSignup: bool(env, "GOTRUE_DISABLE_SIGNUP", false),
    emailEnabled: bool(env, "GOTRUE_EXTERNAL_EMAIL_ENABLED", true),
    autoconfirm: bool(env, "GOTRUE_MAILER_AUTOCONFIRM", false),
    password: {
      // Auth raises a minimum under 6 to 6.
      minLength: Math.max(6, number(env, "GOTRUE_PASSWORD_MIN_LENGTH", 6)),
      requiredCharacters: parseRequiredCharacters(optional(env, "GOTRUE_PASSWORD_REQUIRED_CHARACTERS")),
    },
    refreshTokenRotation: bool(env, "GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED", true),
    refreshTokenReuseIntervalSeconds: number(env, "GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL", 0),
    rateLimit: {
      header: optional(env, "GOTRUE_RATE_LIMIT_HEADER"),
      token: perFiveMinutes("GOTRUE_RATE_LIMIT_TOKEN_REFRESH", 150),
      signups: perFiveMinutes("GOTRUE_RATE_LIMIT_OTP", 30),
      user: perFiveMinutes("GOTRUE_RATE_LIMIT_OTP", 30),
      emailSentPerHour: number(env, "GOTRUE_RATE_LIMIT_EMAIL_SENT", 30),
    },
    corsAllowedHeaders: list(optional(env, "GOTRUE_CORS_ALLOWED_HEADERS")),
    logLevel: (levels as readonly string[]).includes(level) ? level as AuthConfig["logLevel"] : "info",
  };
}
