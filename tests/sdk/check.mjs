// The providers' official SDKs against `nouscli mock-server`: text, tool
// calls, a tool-result turn, reasoning (with its signature sent back) and the
// Responses API, streamed and not; embeddings (openai-node's base64, Gemini's
// embedContent). Run by tests/sdk/run.sh:
//   node check.mjs BASE_URL        (the mock started with --tokens 8)
// Prints one line per check and exits 1 when any failed.

import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { GoogleGenAI } from '@google/genai';
import OpenAI, { AzureOpenAI } from 'openai';

const base = process.argv[2];
const TEXT = 'Hello from the nous-http mock server.';
const REASONING = 'Thinking about the answer.';
let failed = 0;

function check(name, ok, got) {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : ': got ' + JSON.stringify(got)}`);
    if (!ok) failed++;
}

async function attempt(name, body) {
    try {
        await body();
    } catch (e) {
        check(name, false, String(e && e.stack ? e.stack : e));
    }
}

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } } };

// ---- openai: chat completions ----------------------------------------------------
const openai = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 0 });

await attempt('openai chat whole', async () => {
    const r = await openai.chat.completions.create({
        model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] });
    check('openai chat whole: text', r.choices[0].message.content === TEXT, r.choices[0].message);
    check('openai chat whole: usage', r.usage.completion_tokens > 0, r.usage);
    check('openai chat whole: finish', r.choices[0].finish_reason === 'stop', r.choices[0]);
});

await attempt('openai chat stream', async () => {
    const stream = await openai.chat.completions.create({
        model: 'mock-1', messages: [{ role: 'user', content: 'hi' }], stream: true,
        stream_options: { include_usage: true }, reasoning_effort: 'low' });
    let text = '', reasoning = '', usage = null, finish = null;
    for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (!choice) continue;
        text += choice.delta.content ?? '';
        reasoning += choice.delta.reasoning_content ?? '';
        finish = choice.finish_reason ?? finish;
    }
    check('openai chat stream: text', text === TEXT, text);
    check('openai chat stream: reasoning_content', reasoning === REASONING, reasoning);
    check('openai chat stream: usage chunk', usage && usage.completion_tokens > 0, usage);
    check('openai chat stream: finish', finish === 'stop', finish);
});

await attempt('openai chat tools', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }];
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const runner = openai.chat.completions.stream({ model: 'mock-1', messages, tools });
    const first = await runner.finalChatCompletion();
    const message = first.choices[0].message;
    const call = message.tool_calls?.[0];
    check('openai chat tools: a call', call?.function.name === 'get_weather', message);
    check('openai chat tools: arguments', JSON.parse(call.function.arguments).city === 'Paris', call);
    messages.push(message, { role: 'tool', tool_call_id: call.id, content: '{"c":18}' });
    const second = await openai.chat.completions.create({ model: 'mock-1', messages, tools });
    check('openai chat tools: answered in text after the result',
          second.choices[0].message.content === TEXT && !second.choices[0].message.tool_calls,
          second.choices[0].message);
});

// ---- openai: the Responses API --------------------------------------------------------
await attempt('openai responses whole', async () => {
    const r = await openai.responses.create({ model: 'mock-1', input: 'hi' });
    check('openai responses whole: output_text', r.output_text === TEXT, r.output_text);
    check('openai responses whole: usage', r.usage.output_tokens > 0, r.usage);
});

await attempt('openai responses stream', async () => {
    const stream = openai.responses.stream({
        model: 'mock-1', input: 'hi', reasoning: { effort: 'low', summary: 'auto' } });
    let text = '', summary = '';
    for await (const event of stream) {
        if (event.type === 'response.output_text.delta') text += event.delta;
        if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
    }
    const final = await stream.finalResponse();
    check('openai responses stream: deltas', text === TEXT, text);
    check('openai responses stream: reasoning summary', summary === REASONING, summary);
    // The SDK assembles the final response from the events (output_text is a
    // convenience of create() only): the message item's text.
    const message = final.output.find((item) => item.type === 'message');
    check('openai responses stream: final message', message?.content[0].text === TEXT, final.output);
    check('openai responses stream: status', final.status === 'completed', final.status);
});

await attempt('openai responses tools', async () => {
    const tools = [{ type: 'function', name: 'get_weather', parameters: weatherSchema, strict: false }];
    const input = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await openai.responses.create({ model: 'mock-1', input, tools });
    const call = first.output.find((item) => item.type === 'function_call');
    check('openai responses tools: a function_call', call?.name === 'get_weather', first.output);
    input.push(...first.output, { type: 'function_call_output', call_id: call.call_id, output: '{"c":18}' });
    const second = await openai.responses.create({ model: 'mock-1', input, tools });
    check('openai responses tools: answered in text after the output',
          second.output_text === TEXT && !second.output.some((i) => i.type === 'function_call'),
          second.output);
});

// ---- anthropic ------------------------------------------------------------------------
const anthropic = new Anthropic({ apiKey: 'sk-ant-mock', baseURL: base, maxRetries: 0 });

await attempt('anthropic whole', async () => {
    const m = await anthropic.messages.create({
        model: 'mock-1', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    check('anthropic whole: text', m.content[0].text === TEXT, m.content);
    check('anthropic whole: stop_reason', m.stop_reason === 'end_turn', m.stop_reason);
});

await attempt('anthropic stream', async () => {
    const stream = anthropic.messages.stream({
        model: 'mock-1', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const final = await stream.finalMessage();
    check('anthropic stream: text events', text === TEXT, text);
    check('anthropic stream: usage', final.usage.output_tokens > 0, final.usage);
});

await attempt('anthropic thinking tool loop', async () => {
    const tools = [{ name: 'get_weather', input_schema: weatherSchema }];
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await anthropic.messages.stream({
        model: 'mock-1', max_tokens: 2048, messages, tools, thinking }).finalMessage();
    const block = first.content[0];
    check('anthropic thinking: a signed thinking block first',
          block.type === 'thinking' && block.thinking === REASONING && block.signature.length > 0,
          first.content);
    const use = first.content.find((b) => b.type === 'tool_use');
    check('anthropic thinking: tool_use', use?.name === 'get_weather' && use.input.city === 'Paris',
          first.content);
    // The assistant turn goes back as the SDK returned it, thinking block included
    // (the mock refuses it without, as Anthropic does).
    messages.push({ role: 'assistant', content: first.content },
                  { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"c":18}' }] });
    const second = await anthropic.messages.create({ model: 'mock-1', max_tokens: 2048, messages, tools, thinking });
    const text = second.content.find((b) => b.type === 'text');
    check('anthropic thinking: answered in text after the result',
          text?.text === TEXT && !second.content.some((b) => b.type === 'tool_use'), second.content);
});

// ---- gemini ----------------------------------------------------------------------------
const gemini = new GoogleGenAI({ apiKey: 'g-mock', httpOptions: { baseUrl: base } });

await attempt('gemini whole', async () => {
    const r = await gemini.models.generateContent({ model: 'mock-1', contents: 'hi' });
    check('gemini whole: text', r.text === TEXT, r.text);
    check('gemini whole: usage', r.usageMetadata.candidatesTokenCount > 0, r.usageMetadata);
});

await attempt('gemini stream', async () => {
    let text = '';
    for await (const chunk of await gemini.models.generateContentStream({ model: 'mock-1', contents: 'hi' }))
        text += chunk.text ?? '';
    check('gemini stream: text', text === TEXT, text);
});

await attempt('gemini thinking tool loop', async () => {
    const config = {
        tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: weatherSchema }] }],
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    };
    const contents = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const first = await gemini.models.generateContent({ model: 'mock-1', contents, config });
    const parts = first.candidates[0].content.parts;
    check('gemini thinking: a thought part', parts.some((p) => p.thought && p.text === REASONING), parts);
    const call = first.functionCalls?.[0];
    check('gemini thinking: functionCall', call?.name === 'get_weather' && call.args.city === 'Paris', parts);
    check('gemini thinking: thoughtSignature on the call part',
          parts.some((p) => p.functionCall && p.thoughtSignature), parts);
    contents.push(first.candidates[0].content,
                  { role: 'user', parts: [{ functionResponse: { name: call.name, response: { c: 18 } } }] });
    const second = await gemini.models.generateContent({ model: 'mock-1', contents, config });
    check('gemini thinking: answered in text after the response',
          second.text === TEXT && !second.functionCalls, second.candidates[0].content.parts);
});

// ---- structured outputs: the SDKs' own parse helpers read the mock's answer -----
const planSchema = {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' },
                  tags: { type: 'array', items: { type: 'string', enum: ['sun', 'rain'] } } },
    required: ['city', 'days', 'tags'], additionalProperties: false };
const validPlan = (v) => v && typeof v.city === 'string' && Number.isInteger(v.days) &&
    Array.isArray(v.tags) && v.tags.every((t) => t === 'sun' || t === 'rain');

await attempt('openai chat parse', async () => {
    const r = await openai.chat.completions.parse({
        model: 'mock-1', messages: [{ role: 'user', content: 'plan' }],
        response_format: { type: 'json_schema',
                           json_schema: { name: 'plan', schema: planSchema, strict: true } } });
    check('openai chat.completions.parse: parsed', validPlan(r.choices[0].message.parsed),
          r.choices[0].message);
});

await attempt('openai chat stream structured', async () => {
    const stream = openai.chat.completions.stream({
        model: 'mock-1', messages: [{ role: 'user', content: 'plan' }],
        response_format: { type: 'json_schema',
                           json_schema: { name: 'plan', schema: planSchema, strict: true } } });
    let deltas = 0;
    stream.on('content.delta', () => { deltas++; });
    const final = await stream.finalChatCompletion();
    // The SDK parses a plain json_schema stream only with its zod helper: the text is read here.
    check('openai chat.completions.stream: JSON valid against the schema, in small deltas',
          validPlan(JSON.parse(final.choices[0].message.content)) && deltas > 5,
          { deltas, message: final.choices[0].message });
});

await attempt('openai responses parse', async () => {
    const r = await openai.responses.parse({
        model: 'mock-1', input: 'plan',
        text: { format: { type: 'json_schema', name: 'plan', schema: planSchema, strict: true } } });
    check('openai responses.parse: output_parsed', validPlan(r.output_parsed), r.output);
});

await attempt('openai refusal', async () => {
    const refusing = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 0,
                                  defaultHeaders: { 'x-mock-fault': 'refusal' } });
    const r = await refusing.chat.completions.parse({
        model: 'mock-1', messages: [{ role: 'user', content: 'plan' }],
        response_format: { type: 'json_schema',
                           json_schema: { name: 'plan', schema: planSchema, strict: true } } });
    check('openai chat.completions.parse: refusal', typeof r.choices[0].message.refusal === 'string' &&
          r.choices[0].message.refusal.length > 0, r.choices[0].message);
});

await attempt('gemini responseJsonSchema', async () => {
    const r = await gemini.models.generateContent({
        model: 'mock-1', contents: 'plan',
        config: { responseMimeType: 'application/json', responseJsonSchema: planSchema } });
    let value = null;
    try { value = JSON.parse(r.text); } catch (e) { value = r.text; }
    check('gemini responseJsonSchema: JSON valid against it', validPlan(value), r.text);
});

// ---- embeddings ---------------------------------------------------------------------
// openai-node asks for base64 and decodes it itself (little-endian float32):
// its vectors must be the mock's float answer for the same text, bit for bit,
// and Gemini's embedContent the same vectors again.
await attempt('openai embeddings', async () => {
    const input = ['first text', 'second text'];
    const b64 = await openai.embeddings.create({ model: 'text-embedding-3-small', input, dimensions: 64 });
    const floats = await openai.embeddings.create({
        model: 'text-embedding-3-small', input, dimensions: 64, encoding_format: 'float' });
    const rows = b64.data.map((d) => Array.from(d.embedding));
    check('openai embeddings.create: two rows of 64', rows.length === 2 && rows.every((r) => r.length === 64),
          rows.map((r) => r.length));
    check('openai embeddings.create: unit vectors',
          rows.every((r) => Math.abs(r.reduce((s, v) => s + v * v, 0) - 1) < 1e-5), rows[0].slice(0, 4));
    check('openai embeddings.create: base64 equals the float answer bit for bit',
          rows.every((r, i) => r.every((v, j) => v === Math.fround(floats.data[i].embedding[j]))),
          [rows[0].slice(0, 3), floats.data[0].embedding.slice(0, 3)]);
    check('openai embeddings.create: usage', b64.usage.prompt_tokens > 0, b64.usage);
    globalThis.firstVector = rows[0];
});

await attempt('gemini embedContent', async () => {
    const r = await gemini.models.embedContent({
        model: 'text-embedding-004', contents: ['first text', 'second text'],
        config: { outputDimensionality: 64 } });
    const values = r.embeddings.map((e) => e.values);
    check('gemini embedContent: two rows of 64', values.length === 2 && values.every((v) => v.length === 64),
          values.map((v) => v.length));
    check('gemini embedContent: the same vector as OpenAI\'s endpoint',
          values[0].every((v, j) => Math.fround(v) === globalThis.firstVector[j]), values[0].slice(0, 3));
});

// ---- Azure OpenAI: openai-node's AzureOpenAI at the deployments path ----------------
await attempt('azure chat', async () => {
    const azure = new AzureOpenAI({ apiKey: 'az-mock', endpoint: base, deployment: 'dep-1',
                                    apiVersion: '2024-10-21', maxRetries: 0 });
    const r = await azure.chat.completions.create({
        model: 'dep-1', messages: [{ role: 'user', content: 'hi' }] });
    check('azure chat.completions.create: text', r.choices[0].message.content === TEXT, r.choices[0]);
    let text = '';
    const stream = await azure.chat.completions.create({
        model: 'dep-1', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    check('azure chat stream: text', text === TEXT, text);
});

// ---- Vertex AI: Anthropic's own Vertex SDK (rawPredict / streamRawPredict) ----------
// Its Google OAuth goes through an auth client; this one hands the SDK a
// bearer, as google-auth-library would after a token exchange.
const vertexAuth = {
    projectId: 'sdk-project',
    getRequestHeaders: async () => new Headers({ authorization: 'Bearer ya29.sdk-test' }),
};
const vertex = new AnthropicVertex({ baseURL: `${base}/v1`, region: 'us-east5',
                                     projectId: 'sdk-project', authClient: vertexAuth, maxRetries: 0 });

await attempt('vertex anthropic', async () => {
    const m = await vertex.messages.create({
        model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    check('vertex anthropic whole: text', m.content[0].text === TEXT, m.content);
    const stream = vertex.messages.stream({
        model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const final = await stream.finalMessage();
    check('vertex anthropic stream: text', text === TEXT, text);
    check('vertex anthropic stream: usage', final.usage.output_tokens > 0, final.usage);
});

// ---- AWS Bedrock: the AWS SDK's Converse and ConverseStream, signed with SigV4 -------
const bedrock = new BedrockRuntimeClient({
    // HTTP/1.1, as the mock speaks it (the SDK picks HTTP/2 for Bedrock by default).
    region: 'us-east-1', endpoint: base, maxAttempts: 1, requestHandler: new NodeHttpHandler(),
    credentials: { accessKeyId: 'AKIDMOCK', secretAccessKey: 'mock-secret' } });
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

await attempt('bedrock converse', async () => {
    const r = await bedrock.send(new ConverseCommand({
        modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }],
        outputConfig: { effort: 'low' },
        toolConfig: { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: weatherSchema } } }] } }));
    const blocks = r.output.message.content;
    check('bedrock converse: text', blocks.some((b) => b.text === TEXT), blocks);
    check('bedrock converse: reasoning with its signature',
          blocks.some((b) => b.reasoningContent?.reasoningText?.signature), blocks);
    check('bedrock converse: tool use', blocks.some((b) => b.toolUse?.name === 'get_weather'), blocks);
    check('bedrock converse: stop reason', r.stopReason === 'tool_use', r.stopReason);
    check('bedrock converse: usage', r.usage.outputTokens > 0, r.usage);
});

await attempt('bedrock converse-stream', async () => {
    const r = await bedrock.send(new ConverseStreamCommand({
        modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    let text = '', stop = null, usage = null;
    for await (const event of r.stream) {
        if (event.contentBlockDelta?.delta?.text) text += event.contentBlockDelta.delta.text;
        if (event.messageStop) stop = event.messageStop.stopReason;
        if (event.metadata) usage = event.metadata.usage;
    }
    check('bedrock converse-stream: text from the event stream', text === TEXT, text);
    check('bedrock converse-stream: messageStop', stop === 'end_turn', stop);
    check('bedrock converse-stream: metadata usage', usage && usage.outputTokens > 0, usage);
});

await attempt('bedrock wrong secret', async () => {
    // The mock recomputes the SDK's SigV4 signature (--aws-secret mock-secret).
    const wrong = new BedrockRuntimeClient({
        region: 'us-east-1', endpoint: base, maxAttempts: 1, requestHandler: new NodeHttpHandler(),
        credentials: { accessKeyId: 'AKIDMOCK', secretAccessKey: 'not-the-secret' } });
    let error = null;
    try {
        await wrong.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    } catch (e) {
        error = e;
    }
    check('bedrock: a wrong secret is InvalidSignatureException (403)',
          error && error.name === 'InvalidSignatureException' && error.$metadata.httpStatusCode === 403,
          error && [error.name, error.message]);
});

console.log(failed ? `${failed} check(s) failed` : 'all SDK checks passed');
process.exit(failed ? 1 : 0);
