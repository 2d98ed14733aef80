/**
 * What a run stored as artifacts. Content is kept once by its hash and may be shared by runs;
 * a run answers only for the artifacts its own `artifact` events name.
 */
import { fail, quoteId } from '../../failure.js';
import type { Store } from '../../store/index.js';
import { artifactRefs } from '../model/rows.js';
import type { Artifact, ArtifactRef } from '../model/types.js';

/** The artifacts a run stored, in order. */
export async function artifactsOf(store: Store, runId: string): Promise<ArtifactRef[]> {
  return artifactRefs(await store.eventsOfType(runId, 'artifact'));
}

/** The bytes of an artifact the run stored; `artifact.not_found` otherwise. */
export async function artifactOf(store: Store, runId: string, sha256: string): Promise<Artifact> {
  const refs = await artifactsOf(store, runId);
  const row = refs.some((ref) => ref.sha256 === sha256) ? await store.getArtifact(sha256) : undefined;
  if (!row) fail('artifact.not_found', `Run ${quoteId(runId)} has no artifact ${quoteId(sha256)}`);
  return {
    sha256: row.sha256,
    size: row.size,
    mediaType: row.media_type,
    createdAt: row.created_at,
    content: Buffer.from(row.content),
  };
}
