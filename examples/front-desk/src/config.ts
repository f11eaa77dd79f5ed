// Where the app finds the project: config.json beside the page, written when the app is
// built (scripts/front-desk-build.sh). The anon key is public by design; what a user may
// do is decided by their session and the API, not by the key.
export type FrontDeskConfig = {
  // The project URL: the local gateway, or https://<ref>.supabase.co.
  supabaseUrl: string;
  anonKey: string;
};

export async function loadConfig(): Promise<FrontDeskConfig> {
  const response = await fetch("config.json", { cache: "no-store" });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  const config: unknown = await response.json();
  if (
    typeof config !== "object" || config === null ||
    !("supabaseUrl" in config) || typeof config.supabaseUrl !== "string" ||
    !("anonKey" in config) || typeof config.anonKey !== "string"
  ) {
    throw new Error("config.json must hold a supabaseUrl and an anonKey");
  }
  return { supabaseUrl: config.supabaseUrl.replace(/\/+$/, ""), anonKey: config.anonKey };
}
