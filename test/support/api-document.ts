// The OpenAPI document the api function serves, built in this process by the same
// createApi the function runs, so it needs no stack and no network. Building the
// document calls none of the app's dependencies: each one here throws if anything
// reaches for it, and GET /v1/openapi.json answers from the endpoint list alone.
// test/docs/openapi.test.ts checks that the running stack serves this very document.
import { createApi } from "../../src/app.ts";
import type { OpenApiDocument } from "./openapi.ts";

function unused(name: string): never {
  const refuse = () => {
    throw new Error(`building the OpenAPI document used the app's ${name}`);
  };
  return new Proxy(refuse, { get: refuse, apply: refuse }) as never;
}

let built: Promise<OpenApiDocument> | undefined;

// The document as JSON text, exactly as GET /v1/openapi.json answers it.
export async function apiDocumentText(): Promise<string> {
  const handle = createApi({
    pool: unused("database pool"),
    db: unused("Kysely instance"),
    identity: unused("identity provider"),
    verifyAccessToken: unused("token verifier"),
    webhooks: unused("webhook settings"),
    push: unused("push settings"),
    webhookSubscriptions: unused("webhook subscription settings"),
    calendarImports: unused("calendar import settings"),
    referenceRenderer: unused("reference renderer"),
    now: unused("clock"),
    logger: {
      error: (message, fields) => {
        throw new Error(`building the OpenAPI document logged an error: ${message} ${JSON.stringify(fields)}`);
      },
      warn: (message) => {
        throw new Error(`building the OpenAPI document logged a warning: ${message}`);
      },
    },
  });
  const response = await handle(new Request("http://function/api/v1/openapi.json"));
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}: ${text}`);
  return text;
}

// Built once per test process.
export function apiDocument(): Promise<OpenApiDocument> {
  built ??= apiDocumentText().then((text) => JSON.parse(text) as OpenApiDocument);
  return built;
}
