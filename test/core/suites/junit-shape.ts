import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { expect } from 'vitest';

/**
 * JUnit XML as CI reporters read it, checked with a real XML parser (fast-xml-parser) against
 * the shape of the JUnit schema (Ant's junit.xsd, which Jenkins' junit-10.xsd and GitLab's
 * parser follow): <testsuites> of <testsuite name tests failures errors time> of
 * <testcase name classname time>, each with at most one of <failure type>/<error type>/<skipped>,
 * and the counts matching the children.
 */

type Node = Record<string, unknown>;

const DECIMAL = /^\d+(\.\d+)?$/;
const INTEGER = /^\d+$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

export interface ParsedJunit {
  suites: Node[];
  cases: Node[];
}

export function expectJunitShape(xml: string): ParsedJunit {
  expect(XMLValidator.validate(xml), 'well-formed XML').toBe(true);
  const parsed = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    isArray: (name) => ['testsuite', 'testcase', 'property', 'failure', 'error', 'skipped'].includes(name),
  }).parse(xml) as Node;
  const root = parsed.testsuites as Node;
  expect(root, 'root <testsuites>').toBeDefined();
  const allowedRoot = new Set(['@name', '@tests', '@failures', '@errors', '@time', '@disabled', 'testsuite']);
  for (const key of Object.keys(root)) expect(allowedRoot.has(key), `testsuites has ${key}`).toBe(true);
  const suites = root.testsuite as Node[];
  expect(suites.length).toBeGreaterThan(0);
  const cases: Node[] = [];
  for (const suite of suites) {
    for (const required of ['@name', '@tests', '@failures', '@errors', '@time']) expect(suite[required], `testsuite ${required}`).toBeDefined();
    for (const count of ['@tests', '@failures', '@errors', '@skipped']) if (suite[count] !== undefined) expect(String(suite[count])).toMatch(INTEGER);
    expect(String(suite['@time'])).toMatch(DECIMAL);
    if (suite['@timestamp'] !== undefined) expect(String(suite['@timestamp'])).toMatch(TIMESTAMP);
    const allowed = new Set(['@name', '@tests', '@failures', '@errors', '@skipped', '@time', '@timestamp', '@hostname', '@id', '@package', 'properties', 'testcase', 'system-out', 'system-err']);
    for (const key of Object.keys(suite)) expect(allowed.has(key), `testsuite has ${key}`).toBe(true);
    const tests = (suite.testcase as Node[] | undefined) ?? [];
    let failures = 0;
    let errors = 0;
    for (const test of tests) {
      for (const required of ['@name', '@classname', '@time']) expect(test[required], `testcase ${required}`).toBeDefined();
      expect(String(test['@time'])).toMatch(DECIMAL);
      const allowedCase = new Set(['@name', '@classname', '@time', '@assertions', 'failure', 'error', 'skipped', 'system-out', 'system-err']);
      for (const key of Object.keys(test)) expect(allowedCase.has(key), `testcase has ${key}`).toBe(true);
      const outcomes = ['failure', 'error', 'skipped'].filter((key) => test[key] !== undefined);
      expect(outcomes.length, 'at most one of failure, error, skipped').toBeLessThanOrEqual(1);
      for (const key of ['failure', 'error']) {
        for (const element of (test[key] as Node[] | undefined) ?? []) expect(typeof element === 'object' && element['@type'], `${key} has a type`).toBeTruthy();
      }
      failures += ((test.failure as unknown[] | undefined) ?? []).length;
      errors += ((test.error as unknown[] | undefined) ?? []).length;
      cases.push(test);
    }
    expect(Number(suite['@tests'])).toBe(tests.length);
    expect(Number(suite['@failures'])).toBe(failures);
    expect(Number(suite['@errors'])).toBe(errors);
  }
  return { suites, cases };
}
