/** The filtering proxy (placeholder until written). */
export interface FilteringProxy {
  readonly port: number;
  close(): Promise<void>;
}
export async function startProxy(_hosts: readonly string[], _onRefusal: (host: string) => void): Promise<FilteringProxy> {
  throw new Error('not yet');
}
