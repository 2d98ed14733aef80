// @ts-check
/**
 * A form for a value a JSON Schema describes, as a person fills it in to answer a run's question:
 * a text field for a string, a number field for a number or an integer, a checkbox for a
 * boolean, a select (or radios, for a few) for an enum or a question's choices, one field per
 * property for an object, and JSON text for anything else. Every control has a label. The form
 * reads what was typed as it is: checking it against the schema is the server's (a 400 names
 * each issue), so the page never holds a second, different validator.
 */
import { h } from './dom.js';

/** @typedef {Record<string, any>} Schema */
/** @typedef {{ ok: true, value: unknown } | { ok: false, message: string }} Read */
/** @typedef {{ element: HTMLElement, read: () => Read }} Field */

let counter = 0;
/** A fresh id for a control and its label. @param {string} name */
function idFor(name) {
  counter += 1;
  return `field-${name.replace(/[^\w-]/g, '_')}-${counter}`;
}

/** Radios up to this many options, a select beyond. */
const MAX_RADIOS = 5;

/** The schema's type, the first non-null one of a list. @param {Schema} schema @returns {string | undefined} */
function typeOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (typeof type === 'string') return type;
  if (schema.properties && typeof schema.properties === 'object') return 'object';
  return undefined;
}

/** A hint from the schema's bounds and format, shown under a field. @param {Schema} schema */
function hintOf(schema) {
  const parts = [];
  if (typeof schema.description === 'string') parts.push(schema.description);
  if (schema.minimum !== undefined) parts.push(`at least ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`more than ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined) parts.push(`at most ${schema.maximum}`);
  if (schema.exclusiveMaximum !== undefined) parts.push(`less than ${schema.exclusiveMaximum}`);
  if (schema.minLength !== undefined) parts.push(`${schema.minLength} characters or more`);
  if (schema.maxLength !== undefined) parts.push(`${schema.maxLength} characters or fewer`);
  if (typeof schema.pattern === 'string') parts.push(`matching ${schema.pattern}`);
  if (typeof schema.format === 'string') parts.push(schema.format);
  return parts.join(', ');
}

/**
 * One of a list of options: radios in a fieldset for a few, a select for more.
 * @param {string} name @param {string} label @param {unknown[]} options
 * @returns {Field}
 */
function choiceField(name, label, options) {
  const text = (/** @type {unknown} */ v) => (typeof v === 'string' ? v : JSON.stringify(v));
  if (options.length <= MAX_RADIOS) {
    const group = idFor(name);
    const radios = options.map((option, i) =>
      h('input', { type: 'radio', name: group, value: String(i), 'data-choice': text(option) }),
    );
    const element = h(
      'fieldset',
      { class: 'field choices', 'data-field': name },
      h('legend', {}, label),
      ...radios.map((radio, i) => h('label', { class: 'choice' }, radio, ' ', text(options[i]))),
    );
    return {
      element,
      read: () => {
        const checked = radios.findIndex((r) => r.checked);
        return checked < 0 ? { ok: false, message: `${label}: choose one` } : { ok: true, value: options[checked] };
      },
    };
  }
  const id = idFor(name);
  const select = h(
    'select',
    { id, 'data-field-input': name },
    h('option', { value: '' }, '— choose —'),
    ...options.map((option, i) => h('option', { value: String(i) }, text(option))),
  );
  return {
    element: h('div', { class: 'field', 'data-field': name }, h('label', { for: id }, label), select),
    read: () =>
      select.value === ''
        ? { ok: false, message: `${label}: choose one` }
        : { ok: true, value: options[Number(select.value)] },
  };
}

/**
 * A labelled input, with the schema's hint.
 * @param {string} name @param {string} label @param {HTMLInputElement | HTMLTextAreaElement} input @param {Schema} schema
 */
function labelled(name, label, input, schema) {
  const id = idFor(name);
  input.id = id;
  input.dataset.fieldInput = name;
  const hint = hintOf(schema);
  return h(
    'div',
    { class: 'field', 'data-field': name },
    h('label', { for: id }, label),
    input,
    hint ? h('span', { class: 'hint muted' }, hint) : null,
  );
}

/**
 * A field for a value of `schema`.
 * @param {Schema | null} schema null: any text
 * @param {string} name a key for tests and ids (`answer`, `answer.count`)
 * @param {string} label what the field is labelled with
 * @returns {Field}
 */
export function fieldFor(schema, name, label) {
  const s = schema ?? { type: 'string', minLength: 1 };
  if (Array.isArray(s.enum)) return choiceField(name, label, s.enum);
  if (s.const !== undefined) return { element: h('span'), read: () => ({ ok: true, value: s.const }) };
  switch (typeOf(s)) {
    case 'string': {
      const long = (s.maxLength ?? Infinity) > 200 && s.format === undefined;
      const input = long ? h('textarea', { rows: 3 }) : h('input', { type: 'text' });
      if (typeof s.default === 'string') input.value = s.default;
      return { element: labelled(name, label, input, s), read: () => ({ ok: true, value: input.value }) };
    }
    case 'number':
    case 'integer': {
      const input = h('input', { type: 'number', step: typeOf(s) === 'integer' ? '1' : 'any' });
      if (typeof s.default === 'number') input.value = String(s.default);
      // An empty or unreadable field is sent as null: the server names what is wrong with it.
      const read = () => ({ ok: /** @type {const} */ (true), value: input.value === '' ? null : Number(input.value) });
      return { element: labelled(name, label, input, s), read };
    }
    case 'boolean': {
      const box = h('input', { type: 'checkbox' });
      box.checked = s.default === true;
      box.dataset.fieldInput = name;
      const element = h('div', { class: 'field', 'data-field': name }, h('label', { class: 'check' }, box, ' ', label));
      return { element, read: () => ({ ok: true, value: box.checked }) };
    }
    case 'object':
      if (s.properties && typeof s.properties === 'object') return objectField(s, name, label);
      return jsonField(s, name, label);
    default:
      return jsonField(s, name, label);
  }
}

/** One field per property; optional ones left empty are left out. @param {Schema} s @param {string} name @param {string} label @returns {Field} */
function objectField(s, name, label) {
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const fields = Object.entries(/** @type {Record<string, Schema>} */ (s.properties)).map(([key, sub]) => {
    const title = typeof sub.title === 'string' ? sub.title : key;
    return { key, field: fieldFor(sub, `${name}.${key}`, required.has(key) ? `${title} (required)` : title) };
  });
  const element = h(
    'fieldset',
    { class: 'field object', 'data-field': name },
    h('legend', {}, label),
    ...fields.map((f) => f.field.element),
  );
  return {
    element,
    read: () => {
      /** @type {Record<string, unknown>} */
      const value = {};
      for (const { key, field } of fields) {
        const read = field.read();
        if (!read.ok) {
          if (required.has(key)) return read;
          continue;
        }
        if (!required.has(key) && (read.value === '' || read.value === null)) continue;
        value[key] = read.value;
      }
      return { ok: true, value };
    },
  };
}

/** JSON text, for a schema the form has no control for. @param {Schema} s @param {string} name @param {string} label @returns {Field} */
function jsonField(s, name, label) {
  const input = h('textarea', { rows: 4, class: 'mono', spellcheck: 'false' });
  if (s.default !== undefined) input.value = JSON.stringify(s.default, null, 2);
  return {
    element: labelled(name, `${label} (JSON)`, input, s),
    read: () => {
      try {
        return { ok: true, value: JSON.parse(input.value) };
      } catch (error) {
        return { ok: false, message: `${label}: not JSON (${error instanceof Error ? error.message : String(error)})` };
      }
    },
  };
}

/**
 * The field of a question: its schema's, or one of its choices, or any text.
 * @param {{ question: string, choices: string[] | null, schema: Schema | null }} ask
 * @returns {Field}
 */
export function questionField(ask) {
  if (!ask.schema && Array.isArray(ask.choices) && ask.choices.length > 0) {
    return choiceField('answer', 'Answer', ask.choices);
  }
  return fieldFor(ask.schema, 'answer', 'Answer');
}
