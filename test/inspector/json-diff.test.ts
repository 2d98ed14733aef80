/**
 * The diff an approver reads before approving an edit (inspector/json-diff.js): a file dropped
 * from a list reads as that file removed, not as every later one changed; keys added, removed
 * and changed are named by their path; equal values (whatever their key order) have no changes.
 */
import { describe, expect, it } from 'vitest';
import { diffJson, editableJson, sameJson } from '../../inspector/json-diff.js';

describe('json diff', () => {
  it('reads a file dropped from the middle of a list as that file removed', () => {
    const before = { files: ['service-b.json', 'service-d.json', 'service-f.json'] };
    const after = { files: ['service-b.json', 'service-f.json'] };
    expect(diffJson(before, after)).toEqual([{ path: 'files[1]', kind: 'removed', before: 'service-d.json' }]);
    expect(diffJson(after, before)).toEqual([{ path: 'files[1]', kind: 'added', after: 'service-d.json' }]);
  });

  it('names keys added, removed and changed, nested', () => {
    const before = { to: { name: 'all', cc: ['a'] }, subject: 'hi', 'x-y': 1 };
    const after = { to: { name: 'team', cc: ['a', 'b'] }, body: 'text', 'x-y': 1 };
    expect(diffJson(before, after)).toEqual([
      { path: 'to.name', kind: 'changed', before: 'all', after: 'team' },
      { path: 'to.cc[1]', kind: 'added', after: 'b' },
      { path: 'subject', kind: 'removed', before: 'hi' },
      { path: 'body', kind: 'added', after: 'text' },
    ]);
    expect(diffJson({ 'a b': 1 }, { 'a b': 2 })).toEqual([{ path: '["a b"]', kind: 'changed', before: 1, after: 2 }]);
  });

  it('compares an element replaced in place inside it, and a change of type as a whole', () => {
    expect(diffJson([{ id: 1, n: 'a' }], [{ id: 1, n: 'b' }])).toEqual([
      { path: '[0].n', kind: 'changed', before: 'a', after: 'b' },
    ]);
    expect(diffJson({ value: 'x' }, { value: 42 })).toEqual([
      { path: 'value', kind: 'changed', before: 'x', after: 42 },
    ]);
    expect(diffJson('x', ['x'])).toEqual([{ path: '', kind: 'changed', before: 'x', after: ['x'] }]);
  });

  it('finds no change between equal values, whatever the order of their keys', () => {
    expect(sameJson({ a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 })).toBe(true);
    expect(diffJson({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toEqual([]);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
  });

  it('compares long arrays index by index', () => {
    const before = Array.from({ length: 500 }, (_, i) => i);
    const after = [...before.slice(0, 499), 'last'];
    expect(diffJson(before, after)).toEqual([{ path: '[499]', kind: 'changed', before: 499, after: 'last' }]);
  });

  it('writes a bidirectional control as its escape in the editable JSON, which reads back as the same text', () => {
    const args = { file: 'invoice\u202efdp.exe', to: 'ops\u2067@example.com', path: 'a\\\u202eb' };
    const text = editableJson(args);
    expect(text).toContain('"file": "invoice\\u202efdp.exe"');
    expect(text).not.toMatch(/[\u202e\u2067]/);
    expect(JSON.parse(text)).toEqual(args);
    expect(diffJson(args, JSON.parse(text))).toEqual([]);
  });
});
