// Where the running local stack is and what it runs with, read from the env file
// scripts/stack.sh writes (NAME=value, or NAME='value' for the settings).
const root = new URL("../../", import.meta.url);

function readStackEnv(): Record<string, string> {
  const text = Deno.readTextFileSync(new URL(".stack/stack.env", root));
  return Object.fromEntries(
    text.split("\n").filter((line) => line.includes("=")).map((line) => {
      const at = line.indexOf("=");
      const value = line.slice(at + 1);
      return [line.slice(0, at), /^'.*'$/.test(value) ? value.slice(1, -1) : value];
    }),
  );
}

const env = readStackEnv();

function setting(name: string): string {
  const value = env[name];
  if (value === undefined) throw new Error(`.stack/stack.env has no ${name}: run scripts/stack.sh up`);
  return value;
}

// The URLs follow the stack's port base (PMS_PORT_BASE), so they are read, not written here.
const apiUrl = setting("API_URL");

export const stack = {
  apiUrl,
  v1: `${apiUrl}/functions/v1/api/v1`,
  dbUrl: setting("DB_URL"),
  authUrl: setting("AUTH_URL"),
  // The Supabase Auth binary the stack built and runs.
  authBin: setting("AUTH_BIN"),
  mailUrl: setting("MAIL_URL"),
  smsUrl: setting("SMS_URL"),
  jwtSecret: setting("JWT_SECRET"),
  // Auth's key set (GOTRUE_JWT_KEYS): its ES256 signing key and the legacy secret.
  authJwtKeys: setting("AUTH_JWT_KEYS"),
  anonKey: setting("ANON_KEY"),
  serviceRoleKey: setting("SERVICE_ROLE_KEY"),
  // What the notifications worker function runs with.
  notifications: {
    sendGridApiKey: setting("SENDGRID_API_KEY"),
    fromEmail: setting("NOTIFICATIONS_FROM_EMAIL"),
    fromName: setting("NOTIFICATIONS_FROM_NAME"),
    // The worker's backoff: base * 2^(attempt - 1) seconds, capped, with jitter.
    retryBaseSeconds: Number(setting("NOTIFICATIONS_RETRY_BASE_SECONDS")),
    retryMaxSeconds: Number(setting("NOTIFICATIONS_RETRY_MAX_SECONDS")),
    sms: {
      accountSid: setting("SMS_ACCOUNT_SID"),
      authToken: setting("SMS_AUTH_TOKEN"),
      fromNumber: setting("SMS_FROM_NUMBER"),
    },
  },
};

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
  // urn:pms:problem:weak-password only.
  reasons?: string[];
  // urn:pms:problem:lifecycle-transition-refused only.
  currentStatus?: string;
  requestedStatus?: string;
  allowedStatuses?: string[];
  // urn:pms:problem:still-referenced only.
  referencedBy?: string;
};

export async function readProblem(response: Response): Promise<Problem> {
  if (response.headers.get("content-type") !== "application/problem+json") {
    throw new Error(`expected a problem document, got ${response.headers.get("content-type")}: ${await response.text()}`);
  }
  return await response.json() as Problem;
}
