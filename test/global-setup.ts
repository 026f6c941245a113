// Builds the CLI the end-to-end tests spawn (and the web UI they load) when sources changed.
export default async function setup(): Promise<void> {
  // @ts-expect-error plain JS build helper without types
  const { buildCoreIfStale, buildRendererIfStale } = await import('../scripts/build-if-stale.js');
  buildCoreIfStale();
  buildRendererIfStale();
}
