// The end client's address as the edge in front of the function saw it: the first
// value of X-Forwarded-For, which Supabase's gateway (and the local nginx gateway) sets.
export function clientAddress(request: Request): string | undefined {
  const first = request.headers.get("x-forwarded-for")?.split(",", 1)[0]?.trim();
  return first ? first : undefined;
}
