/** The `openai` client of a planner: given, or made from options and the usual environment variables. */
import OpenAI from 'openai';
import { fail } from '../../failure.js';
import { OPENAI_PLANNER_DEFAULTS } from './defaults.js';
import { toErrorBody } from './error-body.js';

/** Where and how to reach the API when no client is given. */
export interface ClientConfig {
  client?: OpenAI | undefined;
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  timeoutMs: number;
}

/** The official client, reading the error bodies of older OpenAI-compatible servers too. */
class CompatibleOpenAI extends OpenAI {
  protected override makeStatusError(
    status: number,
    error: object,
    message: string | undefined,
    headers: Headers,
  ): ReturnType<OpenAI['makeStatusError']> {
    return super.makeStatusError(status, toErrorBody(error) as object, message, headers);
  }
}

function env(name: string): string | undefined {
  return process.env[name] || undefined;
}

/**
 * The given client, or a new one without its own retries (the planner retries, and classifies
 * why). Options win over `OPENAI_BASE_URL` / `OPENAI_API_KEY`; a server given by URL alone gets
 * a placeholder key, since local OpenAI-compatible servers need none. A client made here reads
 * flat error bodies (older vLLM, FastChat); a given one reads what it was built to read.
 */
export function createClient(config: ClientConfig): OpenAI {
  if (config.client) return config.client;
  const baseURL = config.baseURL || env('OPENAI_BASE_URL');
  const apiKey =
    config.apiKey || env('OPENAI_API_KEY') || (baseURL ? OPENAI_PLANNER_DEFAULTS.placeholderApiKey : undefined);
  if (!apiKey) {
    fail(
      'input.invalid',
      'The OpenAI planner needs an apiKey or OPENAI_API_KEY, or the baseURL of a server that needs none',
    );
  }
  return new CompatibleOpenAI({ apiKey, baseURL, maxRetries: 0, timeout: config.timeoutMs });
}
