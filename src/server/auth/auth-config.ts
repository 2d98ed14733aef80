/** Token configuration: each token maps to a tenant, roles and a name, from a JSON file or the environment. */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { BatonError, createFailure } from '../../failure.js';

/** What a token may do: `submit` runs, `approve` decisions, `view` reads and streams, `admin` all three. */
export const ROLES = ['submit', 'approve', 'view', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * A role of the deployment's own (`finance`, `security`): it lets a token decide the waits a
 * policy or an expiry escalated to it (with `approve`, which every decision needs), nothing else.
 */
export const CUSTOM_ROLE = /^[a-z][a-z0-9_.-]{0,63}$/;

/** True for a role a token may carry: one of `ROLES`, or a custom one. */
export function isRoleName(role: unknown): role is string {
  return typeof role === 'string' && CUSTOM_ROLE.test(role);
}

/** Shortest configured ticket secret accepted. */
export const MIN_TICKET_SECRET = 32;

/** Throws `input.invalid` for a configured ticket secret too short to sign with. */
export function checkTicketSecret(secret: string, source = 'The ticket secret'): void {
  if (secret.length < MIN_TICKET_SECRET) {
    throw new BatonError(
      createFailure(
        'input.invalid',
        `${source} has ${secret.length} characters; it needs at least ${MIN_TICKET_SECRET} (its text is not shown)`,
      ),
    );
  }
}

const TENANT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const tokenSchema = z.strictObject({
  token: z.string().min(16, 'a token needs at least 16 characters'),
  tenant: z.string().regex(TENANT, 'a tenant is 1-64 letters, digits, _ . -'),
  roles: z
    .array(
      z.union([
        z.enum(ROLES),
        z.string().regex(CUSTOM_ROLE, 'a custom role is 1-64 lowercase letters, digits, _ . - (e.g. finance)'),
      ]),
    )
    .min(1),
  /** Recorded as the decider of approvals; defaults to `<tenant>/token-<n>`. */
  name: z.string().min(1).max(100).optional(),
  /** When set, the only scopes a run started with this token may carry. */
  scope: z.array(z.string().min(1)).optional(),
});

/** One configured token. */
export type TokenEntry = z.infer<typeof tokenSchema>;

export const authConfigSchema = z
  .strictObject({
    tokens: z.array(tokenSchema),
    /** The deployment's own roles (`finance`): declared once, so a misspelt role is refused, not a new role. */
    roles: z.array(z.string().regex(CUSTOM_ROLE)).optional(),
  })
  .superRefine((config, ctx) => {
    const known = new Set<string>([...ROLES, ...(config.roles ?? [])]);
    config.tokens.forEach((entry, index) => {
      entry.roles.forEach((role, at) => {
        if (known.has(role)) return;
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', index, 'roles', at],
          message: `'${role}' is none of ${ROLES.join(', ')}, and not one of the file's own "roles"`,
        });
      });
    });
  });

/** The server's authentication: its tokens (none means dev mode, loopback only) and the ticket secret. */
export interface AuthConfig {
  tokens: TokenEntry[];
  /** Roles of the deployment's own that tokens may carry (besides `ROLES`). */
  roles?: string[];
  /**
   * Key that signs SSE tickets (at least 32 characters): give every server of a deployment the
   * same one. Without it the key is kept in the database, created by the first server that needs
   * it, so every server on that database shares it.
   */
  ticketSecret?: string;
}

/** Checks a token configuration (parsed JSON); throws `input.invalid` naming the problem, never a token. */
export function parseAuthConfig(value: unknown, source = 'the token configuration'): AuthConfig {
  const parsed = authConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
    const first = issues[0];
    throw new BatonError(
      createFailure('input.invalid', `Invalid ${source}: ${first?.path.join('.')} ${first?.message}`, {
        details: { issues },
      }),
    );
  }
  const seen = new Set<string>();
  for (const [i, entry] of parsed.data.tokens.entries()) {
    if (seen.has(entry.token)) {
      throw new BatonError(createFailure('input.invalid', `Invalid ${source}: tokens.${i} repeats an earlier token`));
    }
    seen.add(entry.token);
  }
  return parsed.data;
}

/**
 * Loads tokens from `file` if given, else from `BATON_TOKENS` (the JSON itself) or
 * `BATON_TOKENS_FILE` (a path) in `env`; none of them means no tokens (dev mode). The ticket
 * secret comes from `BATON_TICKET_SECRET` when set (else the database keeps one).
 * @example
 * const auth = loadAuthConfig({ file: './tokens.json' });
 * // tokens.json: { "tokens": [{ "token": "…", "tenant": "acme", "roles": ["submit", "view"], "name": "ci" }] }
 */
export function loadAuthConfig(source: { file?: string; env?: Record<string, string | undefined> } = {}): AuthConfig {
  const env = source.env ?? process.env;
  const file = source.file ?? env.BATON_TOKENS_FILE;
  const secret = env.BATON_TICKET_SECRET;
  if (secret !== undefined && secret !== '') checkTicketSecret(secret, 'BATON_TICKET_SECRET');
  const withSecret = (config: AuthConfig): AuthConfig =>
    secret !== undefined && secret !== '' ? { ...config, ticketSecret: secret } : config;
  if (file) {
    return withSecret(parseAuthConfig(parseJson(readText(file), `token file '${file}'`), `token file '${file}'`));
  }
  if (env.BATON_TOKENS) return withSecret(parseAuthConfig(parseJson(env.BATON_TOKENS, 'BATON_TOKENS'), 'BATON_TOKENS'));
  return withSecret({ tokens: [] });
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BatonError(createFailure('input.invalid', `Cannot read token file '${file}': ${reason}`));
  }
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // JSON.parse quotes the text it stopped at, which here is part of a token: only where is said.
    const reason = error instanceof Error ? error.message : String(error);
    const at = /position (\d+)/.exec(reason)?.[1];
    throw new BatonError(
      createFailure(
        'input.invalid',
        `${source} is not valid JSON${at === undefined ? '' : ` (at character ${at})`}; its text is not shown, as it holds tokens`,
      ),
    );
  }
}
