// Where the running local stack is, read from the env file it wrote.
const root = new URL("../../", import.meta.url);

function readStackEnv(): Record<string, string> {
  const text = Deno.readTextFileSync(new URL(".stack/stack.env", root));
  return Object.fromEntries(
    text.split("\n").filter((line) => line.includes("=")).map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    }),
  );
}

const env = readStackEnv();

export const stack = {
  apiUrl: "http://127.0.0.1:54321",
  v1: "http://127.0.0.1:54321/functions/v1/api/v1",
  dbUrl: "postgresql://postgres:postgres@127.0.0.1:54322/postgres",
  authUrl: "http://127.0.0.1:54325",
  mailUrl: "http://127.0.0.1:54324",
  jwtSecret: env.JWT_SECRET!,
  anonKey: env.ANON_KEY!,
};

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
};

export async function readProblem(response: Response): Promise<Problem> {
  if (response.headers.get("content-type") !== "application/problem+json") {
    throw new Error(`expected a problem document, got ${response.headers.get("content-type")}: ${await response.text()}`);
  }
  return await response.json() as Problem;
}
