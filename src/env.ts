export function requireEnv(name: string): string {
  const value = Deno.env.get(name);
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

// The api function's URL as a provider calls it, without a trailing slash. On a hosted
// project and behind the local gateway alike that is the project URL's functions path;
// API_PUBLIC_URL says otherwise (a custom domain in front of the project). The function
// cannot learn it from a request: the gateway hands it `/api/...` on its own address.
// The worker gives it to the SMS provider as each message's status callback, and the api
// function checks the provider's signature against it.
export function apiPublicUrl(env: (name: string) => string | undefined): string {
  const explicit = env("API_PUBLIC_URL");
  if (explicit) return explicit.replace(/\/+$/, "");
  const projectUrl = env("SUPABASE_URL");
  if (!projectUrl) throw new Error("SUPABASE_URL is not set");
  return `${projectUrl.replace(/\/+$/, "")}/functions/v1/api`;
}
