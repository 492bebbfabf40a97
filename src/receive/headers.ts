/** Headers as node:http gives them (lower-case keys) or as a fetch `Headers`. */
export type IncomingHeaders =
  | Record<string, string | readonly string[] | undefined>
  | {
      /** The header's value by name, any case; null when absent. */
      get(name: string): string | null;
    };

export function headerValue(headers: IncomingHeaders, name: string): string | readonly string[] | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | readonly string[] | undefined>;
  return record[name.toLowerCase()] ?? record[name];
}
