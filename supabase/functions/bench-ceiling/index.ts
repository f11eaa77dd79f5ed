// The HTTP ceiling of `npm run bench`: a bare Deno.serve behind the same gateway as the
// API, answering a fixed JSON body and doing nothing else. `?bytes=N` sizes the body
// like the API answer it stands beside (a page of reservations is larger than one),
// so only the work behind the API differs between the two. The stack starts it like
// every function; it reads nothing and reaches nothing.
const MAX_BYTES = 1_000_000;
const bodies = new Map<number, string>();

// {"data":"xxx…"} of exactly `bytes` bytes (at least the empty envelope), built once per size.
function fixedBody(bytes: number): string {
  let body = bodies.get(bytes);
  if (body === undefined) {
    const envelope = '{"data":""}';
    body = `{"data":"${"x".repeat(Math.max(0, bytes - envelope.length))}"}`;
    bodies.set(bytes, body);
  }
  return body;
}

Deno.serve((request) => {
  const asked = Number(new URL(request.url).searchParams.get("bytes") ?? "0");
  const bytes = Number.isInteger(asked) && asked >= 0 && asked <= MAX_BYTES ? asked : 0;
  return new Response(fixedBody(bytes), { headers: { "content-type": "application/json" } });
});
