import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { MAX_SPEC_VIOLATIONS, type SpecViolation } from '../../shared/shapes.js';

/**
 * GitHub's published webhook schemas (@octokit/openapi-webhooks, DESIGN §16) as a check of every
 * GitHub event. The spec is ~5 MB of JSON and one operation's validator takes ajv 0.4–1.6 s to
 * compile (measured here), so all of it lives in a worker thread, loaded on the first GitHub
 * event and compiled per operation as events need them: the core's event loop never pays for it.
 *
 * The operation of an event is GitHub's `<event>-<action>` key (`issues.opened` → `issues-opened`,
 * `pull_request.opened` → `pull-request-opened`, `push` → `push`); a type GitHub does not publish
 * is not checked (null).
 */

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Ajv2020 } = require(workerData.ajvPath);
let spec = null;
let ajv = null;
const validators = new Map();
function validator(operation) {
  if (validators.has(operation)) return validators.get(operation);
  if (!spec) {
    spec = require(workerData.specPath);
    ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'github', components: spec.components });
  }
  const hook = spec.webhooks && Object.prototype.hasOwnProperty.call(spec.webhooks, operation) ? spec.webhooks[operation] : null;
  const ref = hook && hook.post && hook.post.requestBody && hook.post.requestBody.content && hook.post.requestBody.content['application/json'] && hook.post.requestBody.content['application/json'].schema && hook.post.requestBody.content['application/json'].schema.$ref;
  const validate = typeof ref === 'string' ? ajv.compile({ $ref: 'github' + ref }) : null;
  validators.set(operation, validate);
  return validate;
}
parentPort.on('message', ({ id, operation, payload }) => {
  try {
    const validate = validator(operation);
    if (!validate) return parentPort.postMessage({ id, errors: null });
    const valid = validate(JSON.parse(payload));
    parentPort.postMessage({ id, errors: valid ? [] : (validate.errors || []).slice(0, ${MAX_SPEC_VIOLATIONS}).map((e) => ({ instancePath: e.instancePath, message: e.message || e.keyword, params: e.params })) });
  } catch (error) {
    parentPort.postMessage({ id, errors: null, failure: String(error && error.message) });
  }
});
`;

/** `issues.opened` → `issues-opened`: the key of GitHub's operation for an event type. */
export function githubOperation(eventType: string): string {
  return eventType.replace(/[._]/g, '-');
}

/** ajv's `/a/0/b` → `$.a[0].b` (members that are not identifiers quoted). */
export function jsonPathOf(instancePath: string): string {
  if (instancePath === '') return '$';
  return `$${instancePath
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`))
    .join('')}`;
}

interface Reply {
  id: number;
  errors: { instancePath: string; message: string; params?: Record<string, unknown> }[] | null;
  failure?: string;
}

export class GithubSchemaCheck {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();

  /** Where `payload` (JSON text) breaks the published schema of `eventType`; null when GitHub publishes none. */
  check(eventType: string, payload: string): Promise<SpecViolation[] | null> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Reply>((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, operation: githubOperation(eventType), payload });
    }).then((reply) => {
      if (!reply.errors) return null;
      return reply.errors.map((error) => ({ path: jsonPathOf(error.instancePath), message: describe(error) }));
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const require = createRequire(import.meta.url);
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { ajvPath: require.resolve('ajv/dist/2020.js'), specPath: require.resolve('@octokit/openapi-webhooks/generated/api.github.com.json') },
    });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      resolve?.(reply);
    });
    const fail = () => {
      if (this.worker === worker) this.worker = null;
      for (const resolve of this.pending.values()) resolve({ id: 0, errors: null, failure: 'the schema worker ended' });
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    this.worker = worker;
    return worker;
  }
}

function describe(error: { message: string; params?: Record<string, unknown> }): string {
  const extra = error.params?.['additionalProperty'] ?? error.params?.['missingProperty'];
  return typeof extra === 'string' ? `${error.message} (${extra.slice(0, 100)})` : error.message;
}
