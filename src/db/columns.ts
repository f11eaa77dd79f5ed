// The API speaks camelCase and the schema snake_case; the mapping is mechanical,
// so it is written once, in types as well as at run time.
type Snake<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Tail>}`
  : S;

export type SnakeKeys<T> = { [K in keyof T as K extends string ? Snake<K> : never]: T[K] };

export function snakeKeys<T extends Record<string, unknown>>(value: T): SnakeKeys<T> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field !== undefined) out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = field;
  }
  return out as SnakeKeys<T>;
}

// "check_in_time as checkInTime" for each column: selections Kysely types by their alias.
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
export type Selection<C extends string> = C extends Camel<C> ? C : `${C} as ${Camel<C>}`;

export function camelSelection<const C extends string>(columns: readonly C[]): Selection<C>[] {
  return columns.map((column) =>
    column.includes("_") ? `${column} as ${column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())}` : column
  ) as Selection<C>[];
}
