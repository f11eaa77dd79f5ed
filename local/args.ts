// `--name value` pairs from the command line of a local stack process.
export function readFlags(args: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i];
    const value = args[i + 1];
    if (name === undefined || !name.startsWith("--") || value === undefined) {
      throw new Error(`expected --name value pairs, got: ${args.join(" ")}`);
    }
    flags.set(name.slice(2), value);
  }
  return flags;
}

export function requireFlag(flags: Map<string, string>, name: string): string {
  const value = flags.get(name);
  if (value === undefined) throw new Error(`missing --${name}`);
  return value;
}
