// A self-contained reference page: no CDN, no build step. It reads openapi.json next
// to it and lists every operation by tag, with its parameters, body and responses,
// then every problem type and every named schema those refer to.
export const referencePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Property management API reference</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f7f8fa; }
  header { background: #1d2330; color: #fff; padding: 1rem 2rem; }
  main { max-width: 70rem; margin: 0 auto; padding: 1rem 2rem 4rem; }
  h2 { margin-top: 2.5rem; border-bottom: 1px solid #d5d9e0; }
  details.operation { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; margin: .5rem 0; }
  details.operation > summary { cursor: pointer; padding: .5rem .75rem; display: flex; gap: .75rem; align-items: baseline; }
  .method { font: 600 12px/1 ui-monospace, monospace; padding: .3rem .45rem; border-radius: 4px; color: #fff; min-width: 3.5rem; text-align: center; }
  .get { background: #2f6f4f; } .post { background: #2e5c9a; } .patch { background: #8a5a00; } .delete { background: #9a2e2e; } .put { background: #5a3e8a; }
  .path { font-family: ui-monospace, monospace; }
  .body { padding: 0 1rem 1rem; }
  table { border-collapse: collapse; width: 100%; font-size: 14px; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #eceef2; vertical-align: top; }
  pre { background: #f0f2f5; padding: .5rem; overflow: auto; font-size: 13px; }
  .access { color: #5b6474; font-size: 13px; }
</style>
</head>
<body>
<header><h1 id="title">Property management API</h1><p id="description"></p></header>
<main id="reference"><p>Loading the OpenAPI document…</p></main>
<script>
const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
};
const resolve = (doc, schema) => {
  if (schema && schema.$ref) return doc.components.schemas[schema.$ref.split("/").pop()];
  return schema;
};
const show = (doc, schema) => el("pre", { textContent: JSON.stringify(resolve(doc, schema), null, 2) });

// Beside /v1/docs, however the page was addressed (/v1/docs/ included).
const documentUrl = new URL(location.pathname.replace(/\\/docs\\/*$/, "/openapi.json"), location.href);
fetch(documentUrl).then((r) => {
  if (!r.ok) throw new Error(documentUrl.pathname + " answered " + r.status);
  return r.json();
}).then((doc) => {
  document.getElementById("title").textContent = doc.info.title + " " + doc.info.version;
  document.getElementById("description").textContent = doc.info.description;
  const byTag = new Map();
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const tag = (op.tags || ["Other"])[0];
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push({ path, method, op });
    }
  }
  const main = document.getElementById("reference");
  main.replaceChildren();
  for (const [tag, entries] of byTag) {
    main.append(el("h2", { textContent: tag }));
    for (const { path, method, op } of entries) {
      const body = el("div", { className: "body" });
      body.append(el("p", { className: "access", textContent: "Access: " + op["x-access"] + " · operationId " + op.operationId }));
      const params = (op.parameters || []).map((p) => p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p);
      if (params.length) {
        const table = el("table", {}, el("tr", {}, el("th", { textContent: "Parameter" }), el("th", { textContent: "In" }),
          el("th", { textContent: "Required" }), el("th", { textContent: "Description" })));
        for (const p of params) {
          table.append(el("tr", {}, el("td", { className: "path", textContent: p.name }), el("td", { textContent: p.in }),
            el("td", { textContent: p.required ? "yes" : "no" }), el("td", { textContent: p.description || "" })));
        }
        body.append(table);
      }
      if (op.requestBody) {
        // JSON, or a provider's form (the SMS status callback).
        const [mediaType, media] = Object.entries(op.requestBody.content)[0];
        body.append(el("h4", { textContent: "Request body (" + mediaType + ")" }), show(doc, media.schema));
      }
      body.append(el("h4", { textContent: "Responses" }));
      for (const [status, response] of Object.entries(op.responses)) {
        body.append(el("p", {}, el("strong", { textContent: status + " " }), response.description));
        const content = response.content && Object.values(response.content)[0];
        if (content && Number(status) < 300) body.append(show(doc, content.schema));
        // A problem response names the types it may carry.
        const types = content && Number(status) >= 400 && content.schema.allOf &&
          content.schema.allOf.map((part) => part.properties && part.properties.type && part.properties.type.enum).find(Boolean);
        if (types) body.append(el("p", { className: "types" }, ...types.map((type) => el("code", { textContent: type + " " }))));
      }
      main.append(el("details", { className: "operation" },
        el("summary", {}, el("span", { className: "method " + method, textContent: method.toUpperCase() }),
          el("span", { className: "path", textContent: path }), el("span", { textContent: op.summary })),
        body));
    }
  }
  // The events posted to subscribed endpoints (OpenAPI's webhooks), each with its body.
  if (doc.webhooks) {
    main.append(el("h2", { id: "webhooks", textContent: "Webhooks (events posted to your endpoint)" }));
    for (const [name, item] of Object.entries(doc.webhooks)) {
      const op = item.post;
      const body = el("div", { className: "body" });
      body.append(el("p", { textContent: "Headers: " + op.parameters.map((p) => p.name).join(", ") }));
      body.append(el("h4", { textContent: "Body (application/json)" }), show(doc, op.requestBody.content["application/json"].schema));
      main.append(el("details", { className: "operation webhook" },
        el("summary", {}, el("span", { className: "method post", textContent: "EVENT" }),
          el("span", { className: "path", textContent: name }), el("span", { textContent: op.summary })),
        body));
    }
  }
  // Every problem type, with its status and what a client does about it.
  main.append(el("h2", { id: "problem-types", textContent: "Problem types" }));
  const problems = el("table", {}, el("tr", {}, el("th", { textContent: "type" }), el("th", { textContent: "Status" }),
    el("th", { textContent: "Title" }), el("th", { textContent: "When, and what to do" })));
  for (const type of doc.components.schemas.ProblemType.oneOf) {
    problems.append(el("tr", { className: "problem-type" }, el("td", { className: "path", textContent: type.const }),
      el("td", { textContent: String(type["x-status"]) }), el("td", { textContent: type.title }),
      el("td", { textContent: type.description })));
  }
  main.append(problems);
  main.append(el("h2", { textContent: "Schemas" }));
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    main.append(el("h3", { id: "schema-" + name, textContent: name }), show(doc, schema));
  }
}).catch((error) => {
  document.getElementById("reference").textContent = "Could not load openapi.json: " + error;
});
</script>
</body>
</html>
`;
