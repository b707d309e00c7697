// What nous-http's OTLP exporter sent to the mock's receiver (GET /otlp),
// held to the official opentelemetry-proto definitions (proto/, v1.11.0 of
// the open-telemetry/opentelemetry-proto repository) and to the OpenTelemetry
// JS SDK's own JSON serializer:
//  1. strict: every member is a field of its message (lowerCamelCase JSON
//     names), one member per oneof, enums as integers, 64-bit integers as
//     decimal strings, trace and span ids as hex of their length; then each
//     request is encoded to protobuf and decoded back with protobufjs, and
//     must come back equal;
//  2. planted mistakes (an unknown field, an enum by name, a 64-bit integer
//     as a number, a base64 id, two oneof members) must each be refused, so
//     the check is known to bite;
//  3. every span is rebuilt as a ReadableSpan and serialized by
//     @opentelemetry/otlp-transformer's JsonTraceSerializer; both requests,
//     read through the proto definitions with default values dropped, must
//     be equal field by field.
//   node check_otlp.mjs MOCK_URL EXPECTED_SPANS   (reads MOCK_URL/otlp)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';

const here = path.dirname(fileURLToPath(import.meta.url));
const protoDir = path.join(here, 'proto');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(protoDir, target);
root.loadSync([
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
]);
root.resolveAll();
const TraceRequest = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const MetricsRequest = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
// OTLP's exception to the protobuf JSON mapping: these bytes fields are hex.
const HEX_IDS = { traceId: 32, spanId: 16, parentSpanId: 16 };

/// Strict: throws naming the path of the first member that is not as OTLP/JSON writes it.
function strict(type, value, where) {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${where}: ${type.name} must be a JSON object`);
  const oneofs = new Map();
  for (const [key, member] of Object.entries(value)) {
    const field = type.fields[key];  // protobufjs names fields in lowerCamelCase, as the JSON mapping does
    if (!field) throw new Error(`${where}.${key}: no such field in ${type.fullName}`);
    if (field.partOf) {
      if (oneofs.has(field.partOf.name))
        throw new Error(`${where}: ${oneofs.get(field.partOf.name)} and ${key} are both of oneof ${field.partOf.name}`);
      oneofs.set(field.partOf.name, key);
    }
    if (field.repeated) {
      if (!Array.isArray(member)) throw new Error(`${where}.${key}: a repeated field must be an array`);
      member.forEach((item, i) => checkValue(field, item, `${where}.${key}[${i}]`));
    } else {
      checkValue(field, member, `${where}.${key}`);
    }
  }
}

function checkValue(field, v, where) {
  field.resolve();
  if (field.resolvedType instanceof protobuf.Type) return strict(field.resolvedType, v, where);
  if (field.resolvedType instanceof protobuf.Enum) {
    if (!Number.isInteger(v)) throw new Error(`${where}: an enum is written as an integer, not ${JSON.stringify(v)}`);
    if (!Object.values(field.resolvedType.values).includes(v)) throw new Error(`${where}: ${v} is not a value of ${field.resolvedType.name}`);
    return;
  }
  const t = field.type;
  const bad = (what) => { throw new Error(`${where}: ${t} must be ${what}, not ${JSON.stringify(v)}`); };
  if (t === 'string') { if (typeof v !== 'string') bad('a string'); return; }
  if (t === 'bool') { if (typeof v !== 'boolean') bad('a boolean'); return; }
  if (t === 'double' || t === 'float') { if (typeof v !== 'number' || !Number.isFinite(v)) bad('a finite number'); return; }
  if (INT32_TYPES.has(t)) { if (!Number.isInteger(v)) bad('an integer'); return; }
  if (LONG_TYPES.has(t)) { if (typeof v !== 'string' || !/^-?\d+$/.test(v)) bad('a decimal string'); return; }
  if (t === 'bytes') {
    const hexLength = HEX_IDS[field.name];
    if (hexLength) {
      if (typeof v !== 'string' || v.length !== hexLength || !/^[0-9a-f]+$/.test(v)) bad(`${hexLength} lower-case hex digits`);
      if (/^0+$/.test(v)) bad('a valid (non-zero) id');
    } else if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) bad('base64');
    return;
  }
  throw new Error(`${where}: unchecked type ${t}`);
}

/// The JSON with hex ids as bytes and 64-bit strings kept: what protobufjs's fromObject takes.
function forProtobuf(type, value) {
  const out = {};
  for (const [key, member] of Object.entries(value)) {
    const field = type.fields[key];
    field.resolve();
    const one = (v) => {
      if (field.resolvedType instanceof protobuf.Type) return forProtobuf(field.resolvedType, v);
      if (HEX_IDS[field.name]) return Buffer.from(v, 'hex');
      return v;
    };
    out[key] = field.repeated ? member.map(one) : one(member);
  }
  return out;
}

/// A value read through its message type, defaults dropped, 64-bit integers
/// as strings, ids as hex, keys sorted: two writers that mean the same bytes
/// give the same canonical form.
function canonical(type, value) {
  const out = {};
  for (const key of Object.keys(value).sort()) {
    const field = type.fields[key];
    if (!field) throw new Error(`canonical: no field ${key} in ${type.fullName}`);
    field.resolve();
    const one = (v) => {
      if (field.resolvedType instanceof protobuf.Type) return canonical(field.resolvedType, v);
      if (LONG_TYPES.has(field.type)) return String(v);
      if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('hex');
      return v;
    };
    const member = value[key];
    if (member === undefined || member === null) continue;
    if (field.repeated) {
      if (member.length === 0) continue;
      out[key] = member.map(one);
      continue;
    }
    const v = one(member);
    const isDefault = v === 0 || v === '0' || v === '' || v === false;
    if (!isDefault || field.partOf) out[key] = v;  // a oneof member is kept even at its default
  }
  return out;
}

function roundTrip(type, body, where) {
  const message = type.fromObject(forProtobuf(type, body));
  const err = type.verify(message);
  if (err) throw new Error(`${where}: protobufjs verify: ${err}`);
  const decoded = type.decode(type.encode(message).finish());
  const back = type.toObject(decoded, { longs: String, enums: Number, bytes: Buffer, oneofs: false });
  const a = JSON.stringify(canonical(type, forProtobuf(type, body)));
  const b = JSON.stringify(canonical(type, back));
  if (a !== b) throw new Error(`${where}: changed through protobuf encoding:\n  sent ${a}\n  back ${b}`);
}

// ---- 1. what the exporter sent ----
const [mockUrl, expectedSpans] = process.argv.slice(2);
const answer = await fetch(`${mockUrl}/otlp`);
if (!answer.ok) throw new Error(`GET ${mockUrl}/otlp: ${answer.status}`);
const received = await answer.json();
let spans = 0;
received.traces.forEach((body, i) => {
  strict(TraceRequest, body, `traces[${i}]`);
  roundTrip(TraceRequest, body, `traces[${i}]`);
  for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans += ss.spans.length;
});
received.metrics.forEach((body, i) => {
  strict(MetricsRequest, body, `metrics[${i}]`);
  roundTrip(MetricsRequest, body, `metrics[${i}]`);
});
if (spans !== Number(expectedSpans)) throw new Error(`${spans} spans received, ${expectedSpans} expected`);
if (received.metrics.length === 0) throw new Error('no metrics request received');
console.log(`otlp: ${received.traces.length} trace requests (${spans} spans) and ${received.metrics.length} metric requests pass the opentelemetry-proto definitions strictly and survive protobuf encoding`);

// ---- 2. the check bites ----
const sample = received.traces.find((b) => b.resourceSpans[0].scopeSpans[0].spans.length > 0);
const plant = (mutate) => { const copy = structuredClone(sample); mutate(copy.resourceSpans[0].scopeSpans[0].spans[0]); return copy; };
const mistakes = {
  'an unknown field': plant((s) => { s.spanKind = 3; }),
  'an enum by name': plant((s) => { s.kind = 'SPAN_KIND_CLIENT'; }),
  'a 64-bit integer as a number': plant((s) => { s.startTimeUnixNano = Number(s.startTimeUnixNano); }),
  'a base64 trace id': plant((s) => { s.traceId = Buffer.from(s.traceId, 'hex').toString('base64'); }),
  'two members of a oneof': plant((s) => { s.attributes[0].value.intValue = '1'; }),
  'an attribute value that is not an AnyValue': plant((s) => { s.attributes[0].value = 'chat'; }),
};
for (const [what, body] of Object.entries(mistakes)) {
  let refused = false;
  try { strict(TraceRequest, body, 'planted'); } catch { refused = true; }
  if (!refused) throw new Error(`the strict check let ${what} through`);
}
console.log(`otlp: ${Object.keys(mistakes).length} planted mistakes refused`);

// ---- 3. the JS SDK's serializer, field by field ----
const hrTime = (nanos) => { const n = BigInt(nanos); return [Number(n / 1000000000n), Number(n % 1000000000n)]; };
const attributeValue = (v) => {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return v.arrayValue.values.map(attributeValue);
  throw new Error(`no JS attribute for ${JSON.stringify(v)}`);
};
const attributesOf = (list) => Object.fromEntries((list ?? []).map((a) => [a.key, attributeValue(a.value)]));
let compared = 0;
for (const body of received.traces) {
  for (const rs of body.resourceSpans) {
    const resource = resourceFromAttributes(attributesOf(rs.resource.attributes));
    for (const ss of rs.scopeSpans) {
      const readable = ss.spans.map((s) => ({
        name: s.name,
        kind: s.kind - 1,  // the API's SpanKind counts from INTERNAL = 0
        spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: 1 }),
        parentSpanContext: s.parentSpanId ? { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1, isRemote: Boolean(s.flags & 0x200) } : undefined,
        startTime: hrTime(s.startTimeUnixNano),
        endTime: hrTime(s.endTimeUnixNano),
        attributes: attributesOf(s.attributes),
        droppedAttributesCount: 0,
        events: (s.events ?? []).map((e) => ({ name: e.name, time: hrTime(e.timeUnixNano), attributes: attributesOf(e.attributes) })),
        droppedEventsCount: 0,
        status: { code: s.status.code ?? 0, message: s.status.message },
        links: [],
        droppedLinksCount: 0,
        resource,
        instrumentationScope: { name: ss.scope.name, version: ss.scope.version },
      }));
      const theirs = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(readable)));
      const ours = { resourceSpans: [{ resource: rs.resource, scopeSpans: [ss] }] };
      const a = canonical(TraceRequest, forProtobuf(TraceRequest, ours));
      const b = canonical(TraceRequest, forProtobuf(TraceRequest, theirs));
      if (JSON.stringify(a) !== JSON.stringify(b))
        throw new Error(`our spans and the JS SDK's differ:\n  ours   ${JSON.stringify(a)}\n  theirs ${JSON.stringify(b)}`);
      compared += readable.length;
    }
  }
}
console.log(`otlp: ${compared} spans equal, field by field, to what @opentelemetry/otlp-transformer's JsonTraceSerializer writes for them`);
