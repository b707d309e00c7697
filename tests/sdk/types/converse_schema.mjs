// make sdk-test: the Bedrock Converse bodies the mock recorded
// (NNNNNN.bedrock-converse.json, and NNNNNN.bedrock-count.json for
// count-tokens) held to the Bedrock Runtime request schemas
// the official AWS SDK for JavaScript ships (@aws-sdk/client-bedrock-runtime,
// pinned in package-lock.json; its schemas are generated from the service
// model): every member known (unknown ones refused), the required ones
// present, a union with exactly one member, and each value of its type.
// Planted mistakes prove the check can fail.
//   node converse_schema.mjs RECORDED_DIR
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const sdk = require('@aws-sdk/client-bedrock-runtime');
const version = require('@aws-sdk/client-bedrock-runtime/package.json').version;

// A member's schema: a number (a simple type, 64|x a list of x, 128|x a map
// to x), a function giving a schema, or [schema, traits].
function resolve(s) {
  for (;;) {
    if (typeof s === 'function') s = s();
    else if (Array.isArray(s) && s.length === 2 && typeof s[1] === 'number') s = s[0];
    else return s;
  }
}

function check(value, schema, path) {
  const s = resolve(schema);
  if (typeof s === 'number') {
    if (s & 64) return list(value, s & ~64, path);
    if (s & 128) return map(value, s & ~128, path);
    switch (s) {
      case 0: return typeof value === 'string' ? [] : [`${path}: not a string`];
      case 1: return typeof value === 'number' ? [] : [`${path}: not a number`];
      case 2: return typeof value === 'boolean' ? [] : [`${path}: not a boolean`];
      case 15: return []; // a document: any JSON (a tool's input, its schema)
      case 21: return typeof value === 'string' ? [] : [`${path}: a blob is base64 text in JSON`];
      default: return [`${path}: simple type ${s} is not checked here`];
    }
  }
  const [kind, , name, , ...rest] = s;
  if (kind === 1) return list(value, rest[0], path);
  if (kind === 2) return map(value, rest[1], path);
  if (kind !== 3 && kind !== 4) return [`${path}: schema kind ${kind} is not checked here`];
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return [`${path}: not an object (${name})`];
  const [names, schemas, required = 0] = rest;
  const errors = [];
  for (const [key, member] of Object.entries(value)) {
    const i = names.indexOf(key);
    if (i < 0) errors.push(`${path}.${key}: not a member of ${name}`);
    else errors.push(...check(member, schemas[i], `${path}.${key}`));
  }
  for (const key of names.slice(0, required))
    if (!(key in value)) errors.push(`${path}: ${name} requires ${key}`);
  if (kind === 4 && Object.keys(value).length !== 1)
    errors.push(`${path}: the union ${name} holds ${Object.keys(value).length} members`);
  return errors;
}

function list(value, member, path) {
  if (!Array.isArray(value)) return [`${path}: not a list`];
  return value.flatMap((v, i) => check(v, member, `${path}[${i}]`));
}

function map(value, member, path) {
  if (value === null || typeof value !== 'object') return [`${path}: not a map`];
  return Object.entries(value).flatMap(([k, v]) => check(v, member, `${path}.${k}`));
}

// The URL carries the model id; the request shapes require it.
const converseErrors = (body) => check({ ...body, modelId: 'the-model' }, sdk.ConverseRequest$, '$');
const countErrors = (body) => check({ ...body, modelId: 'the-model' }, sdk.CountTokensRequest$, '$');

const planted = {
  'an unknown member': { messages: [], model: 'x' },
  'a union with two members': { messages: [{ role: 'user', content: [{ text: 'x', image: {} }] }] },
  'a schema as an object': { messages: [], outputConfig: { textFormat: { type: 'json_schema',
    structure: { jsonSchema: { schema: { type: 'object' } } } } } },
  'a number as a string': { messages: [], inferenceConfig: { maxTokens: '5' } },
};
let failed = false;
for (const [what, body] of Object.entries(planted)) {
  if (!converseErrors(body).length) {
    console.log(`converse-schema: the planted mistake "${what}" passed: the check is broken`);
    failed = true;
  }
}
const dir = process.argv[2];
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bedrock-converse.json') || f.endsWith('.bedrock-count.json'))
  .sort();
const counts = files.filter((f) => f.endsWith('.bedrock-count.json')).length;
if (!counts) {
  console.log('converse-schema: no Bedrock count-tokens body was recorded');
  failed = true;
}
for (const file of files) {
  const body = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const errors = file.endsWith('.bedrock-count.json') ? countErrors(body) : converseErrors(body);
  for (const e of errors) console.log(`converse-schema: ${file}: ${e}`);
  failed ||= errors.length > 0;
}
if (!files.length) {
  console.log('converse-schema: no Bedrock Converse body was recorded');
  failed = true;
}
console.log(`converse-schema: ${files.length - counts} Converse and ${counts} count-tokens bodies ` +
  `against @aws-sdk/client-bedrock-runtime ${version}'s ConverseRequest and CountTokensRequest, ` +
  `${Object.keys(planted).length} planted mistakes`);
process.exit(failed ? 1 : 0);
