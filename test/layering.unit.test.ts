// The layers of src/ point one way: each module imports only from its own layer or from
// layers below it, and the layers below the capabilities have no import cycles. From the
// bottom: what everything uses (src/logging, src/money), the database (src/db), the queue
// workers' claim loop (src/queue), the HTTP building blocks (src/http), then the
// capabilities, src/app.ts and src/env.ts. The function entrypoints sit above all of it.
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));

const layers: { name: string; rank: number; owns: (path: string) => boolean }[] = [
  { name: "foundation", rank: 0, owns: (p) => p.startsWith("src/logging/") || p.startsWith("src/money/") },
  { name: "db", rank: 1, owns: (p) => p.startsWith("src/db/") },
  { name: "queue", rank: 2, owns: (p) => p.startsWith("src/queue/") },
  { name: "http", rank: 3, owns: (p) => p.startsWith("src/http/") },
  { name: "capabilities", rank: 4, owns: (p) => p.startsWith("src/") },
  { name: "entrypoints", rank: 5, owns: (p) => p.startsWith("supabase/functions/") },
];

function layerOf(path: string) {
  const layer = layers.find((l) => l.owns(path));
  if (!layer) throw new Error(`${path} is in no layer`);
  return layer;
}

type Edge = { from: string; to: string };

// Every relative module specifier of a file: static imports and re-exports, `import
// type` among them (a type-only import still ties the layers), and dynamic imports.
export function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gms,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) if (match[1]) specifiers.push(match[1]);
  }
  return specifiers.filter((s) => s.startsWith("."));
}

// The imports that point up, and the cycles among modules below the capabilities.
export function layeringFaults(edges: Edge[]): { upward: Edge[]; cycles: string[][] } {
  const upward = edges.filter((e) => layerOf(e.to).rank > layerOf(e.from).rank);
  const below = edges.filter((e) => layerOf(e.from).rank < 4 && layerOf(e.to).rank < 4);
  const next = new Map<string, string[]>();
  for (const e of below) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components; a component of more than one module is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return { upward, cycles };
}

async function* typescriptFiles(folder: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(join(root, folder))) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory) yield* typescriptFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

async function projectEdges(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const folder of ["src", "supabase/functions"]) {
    for await (const from of typescriptFiles(folder)) {
      for (const specifier of importsOf(await Deno.readTextFile(join(root, from)))) {
        const to = relative(root, normalize(join(root, dirname(from), specifier)));
        assert(
          to.startsWith("src/") || to.startsWith("supabase/functions/"),
          `${from} imports ${to}, outside the deployed code`,
        );
        edges.push({ from, to });
      }
    }
  }
  return edges;
}

Deno.test("layering: no import in src/ or the functions points to a layer above its own", async () => {
  const edges = await projectEdges();
  // The graph is really read: the HTTP building blocks use the database layer.
  assert(edges.some((e) => e.from.startsWith("src/http/") && e.to.startsWith("src/db/")));
  const { upward } = layeringFaults(edges);
  assert.deepEqual(upward.map((e) => `${e.from} -> ${e.to}`), []);
});

Deno.test("layering: src/db imports nothing of src/ outside it but the foundation", async () => {
  const edges = (await projectEdges()).filter((e) => e.from.startsWith("src/db/"));
  assert(edges.length > 0);
  const outside = edges.filter((e) => !e.to.startsWith("src/db/") && layerOf(e.to).rank !== 0);
  assert.deepEqual(outside.map((e) => `${e.from} -> ${e.to}`), []);
});

Deno.test("layering: the layers below the capabilities have no import cycles", async () => {
  assert.deepEqual(layeringFaults(await projectEdges()).cycles, []);
});

Deno.test("layering: the checker finds an import that points up, a cycle and every form of import", () => {
  assert.deepEqual(
    importsOf(`import type { A } from "../http/a.ts";\nimport {\n  b,\n  c,\n} from "./b.ts";\nexport { d } from "./d.ts";\n` +
      `import "./side-effect.ts";\nconst e = await import("./e.ts");\nimport { z } from "zod";`),
    ["../http/a.ts", "./b.ts", "./d.ts", "./side-effect.ts", "./e.ts"],
  );
  const faults = layeringFaults([
    { from: "src/db/a.ts", to: "src/http/b.ts" },
    { from: "src/http/b.ts", to: "src/db/a.ts" },
    { from: "src/http/c.ts", to: "src/http/d.ts" },
    { from: "src/http/d.ts", to: "src/http/c.ts" },
    { from: "src/guests/e.ts", to: "src/http/c.ts" },
  ]);
  assert.deepEqual(faults.upward, [{ from: "src/db/a.ts", to: "src/http/b.ts" }]);
  assert.deepEqual(faults.cycles.map((c) => c.join(" ")).sort(), ["src/db/a.ts src/http/b.ts", "src/http/c.ts src/http/d.ts"]);
});
