import postgres from "postgres";

export type Sql = postgres.Sql;
export type Transaction = postgres.TransactionSql;

// One pool per function instance, created by the entrypoint at start-up.
export function createPool(url: string, options: { max?: number; applicationName?: string } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? "pms" },
  });
}
