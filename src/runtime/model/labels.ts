/**
 * What a run is found by: its metadata (an object of scalars) and its tags, checked when the run
 * is started, and their search keys (`run_labels`): `m:<key>=<value>` for an entry, `t:<tag>`
 * for a tag. A value is matched as text (`3`, `true` and `"3"` are found by `3`, `true`, `3`).
 */
import { fail } from '../../failure.js';

/** A metadata value: a scalar. */
export type MetadataValue = string | number | boolean | null;

/** Most metadata entries a run has. */
export const MAX_METADATA_KEYS = 32;
/** Most bytes of a run's metadata as JSON. */
export const MAX_METADATA_BYTES = 4096;
/** Longest metadata string value. */
export const MAX_METADATA_VALUE = 256;
/** Most tags a run has. */
export const MAX_TAGS = 20;
/** Most metadata entries and tags one search names at once. */
export const MAX_LABEL_FILTERS = 8;

/** A metadata key or a tag: 1–64 letters, digits and `_ . : / -`. */
const NAME = /^[A-Za-z0-9_.:/-]{1,64}$/;

function refuse(message: string, details: Record<string, unknown> = {}): never {
  return fail('input.invalid', message, { details });
}

/** Checks a run's metadata: an object of at most 32 scalars, 4 KiB as JSON. */
export function checkMetadata(metadata: unknown, what = 'metadata'): Record<string, MetadataValue> {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    refuse(`The ${what} must be an object of scalars (strings, numbers, booleans, null)`);
  }
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_KEYS) {
    refuse(`The ${what} has ${entries.length} keys: at most ${MAX_METADATA_KEYS}`, { keys: entries.length });
  }
  for (const [key, value] of entries) {
    if (!NAME.test(key)) {
      refuse(`The ${what} key ${JSON.stringify(key)} is not 1-64 letters, digits and _ . : / -`, { key });
    }
    const scalar =
      value === null ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      typeof value === 'string';
    if (!scalar)
      refuse(`The ${what} value of '${key}' is not a scalar (a string, a finite number, a boolean, null)`, { key });
    if (typeof value === 'string' && value.length > MAX_METADATA_VALUE) {
      refuse(`The ${what} value of '${key}' is longer than ${MAX_METADATA_VALUE} characters`, { key });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > MAX_METADATA_BYTES)
    refuse(`The ${what} is ${bytes} bytes as JSON: at most ${MAX_METADATA_BYTES}`, { bytes });
  return metadata as Record<string, MetadataValue>;
}

/** Checks a run's tags: at most 20 names, each 1–64 letters, digits and `_ . : / -`; repeats count once. */
export function checkTags(tags: unknown): string[] {
  if (!Array.isArray(tags)) refuse('The tags must be an array of strings');
  const unique = [...new Set(tags as unknown[])];
  if (unique.length > MAX_TAGS)
    refuse(`A run has at most ${MAX_TAGS} tags, not ${unique.length}`, { tags: unique.length });
  for (const tag of unique) checkTag(tag);
  return unique as string[];
}

/** Checks one tag (to search by too). */
export function checkTag(tag: unknown): string {
  if (typeof tag !== 'string' || !NAME.test(tag)) {
    refuse(`The tag ${JSON.stringify(tag)} is not 1-64 letters, digits and _ . : / -`, { tag: String(tag) });
  }
  return tag;
}

/** The search key of a metadata entry. */
export function metadataLabel(key: string, value: MetadataValue): string {
  return `m:${key}=${String(value)}`;
}

/** The search key of a tag. */
export function tagLabel(tag: string): string {
  return `t:${tag}`;
}

/** Every search key of a run's metadata and tags. */
export function labelsOf(
  metadata: Record<string, MetadataValue> | undefined,
  tags: readonly string[] | undefined,
): string[] {
  return [
    ...Object.entries(metadata ?? {}).map(([key, value]) => metadataLabel(key, value)),
    ...(tags ?? []).map(tagLabel),
  ];
}

/** The search keys of a list filter: each metadata entry and tag it names (at most 8), checked. */
export function filterLabels(metadata: unknown, tags: readonly unknown[]): string[] {
  const wanted = metadata === undefined ? {} : checkMetadata(metadata, 'metadata filter');
  const labels = [...labelsOf(wanted, tags.map(checkTag))];
  if (labels.length > MAX_LABEL_FILTERS) {
    refuse(`A search names at most ${MAX_LABEL_FILTERS} metadata entries and tags, not ${labels.length}`);
  }
  return [...new Set(labels)];
}
