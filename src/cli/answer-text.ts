/** A person's answer typed as text (`baton answer`, `baton run`'s prompt), as the question takes it. */

/** What an answer is read against: the question's choices and JSON Schema. */
export interface QuestionShape {
  choices?: string[] | null;
  schema?: Record<string, unknown> | null;
}

/**
 * The answer `text` gives to `question`: the text itself for a question of text or choices (or
 * a schema of type string); for a schema that asks for something else (a number, an object, a
 * list), the text read as JSON, or the text as it is when it is not JSON (the schema then says
 * what is wrong with it).
 */
export function answerFromText(text: string, question: QuestionShape | null | undefined): unknown {
  const schema = question?.schema;
  if (!schema || schema.type === 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The question as one line for a terminal: its text, its choices, the schema an answer must fit. */
export function describeQuestion(question: { question: string } & QuestionShape): string {
  const choices = question.choices?.length ? ` [${question.choices.join(' | ')}]` : '';
  const schema = question.schema ? ` (an answer fitting ${JSON.stringify(question.schema)})` : '';
  return `${question.question}${choices}${schema}`;
}
