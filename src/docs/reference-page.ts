// The API reference page: Scalar's API reference (the @scalar/api-reference package's
// standalone browser bundle, served by this function beside the page, no CDN) renders the
// OpenAPI document next to it, with schemas, examples, the problem types, the security
// schemes and a console that sends requests to this API from the page.

// Nothing outside this origin: the bundle, the document and the console's requests are
// the function's own. Scalar styles itself inline and compiles no code at run time.
export const referencePagePolicy = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const referencePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Property management API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="api-reference"><p id="loading">Loading the API reference…</p></div>
<script>
// The bundle (GET /v1/docs/api-reference.js) and the document are beside /v1/docs, however
// the page was addressed (/v1/docs/ included), so it works behind any prefix.
const base = location.pathname.replace(/\\/docs\\/*$/, "");
const bundle = document.createElement("script");
bundle.src = base + "/docs/api-reference.js";
bundle.onload = () => {
  Scalar.createApiReference("#api-reference", {
    url: base + "/openapi.json",
    // The page loads nothing from elsewhere: system fonts, no hosted client, no proxy.
    withDefaultFonts: false,
    hideClientButton: true,
    showDeveloperTools: "never",
    agent: { disabled: true },
    mcp: { disabled: true },
    telemetry: false,
    persistAuth: false,
    defaultOpenAllTags: false,
    documentDownloadType: "json",
    metaData: { title: "Property management API reference" },
  });
};
bundle.onerror = () => {
  document.getElementById("loading").textContent = "Could not load the API reference's script.";
};
document.head.append(bundle);
</script>
</body>
</html>
`;
