// The reference for bench/chat_load: the official OpenAI Node SDK (npm
// `openai`, as pinned in tests/sdk/package-lock.json) doing the same work:
// N concurrent streamed chat completions, text deltas counted.
//   node chat_load_node.mjs URL_BASE STREAMS
// Prints chat_load's JSON line; cpu_s is this process's user + system time.
import OpenAI from 'openai';

const [base, streamsArg] = process.argv.slice(2);
const streams = Number(streamsArg || 200);
const client = new OpenAI({ apiKey: 'sk-mock', baseURL: `${base}/v1`, maxRetries: 0 });
let tokens = 0, errors = 0;

async function one() {
    try {
        const stream = await client.chat.completions.create({
            model: 'mock-1', messages: [{ role: 'user', content: 'Tell me a story.' }],
            stream: true, stream_options: { include_usage: true } });
        for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) tokens++;
    } catch (e) {
        errors++;
    }
}

const cpuBefore = process.cpuUsage();
const start = process.hrtime.bigint();
await Promise.all(Array.from({ length: streams }, one));
const wall = Number(process.hrtime.bigint() - start) / 1e9;
const cpu = process.cpuUsage(cpuBefore);
const cpuS = (cpu.user + cpu.system) / 1e6;
console.log(JSON.stringify({
    client: 'openai-node', streams, tokens, errors,
    wall_s: Number(wall.toFixed(3)), cpu_s: Number(cpuS.toFixed(3)),
    us_per_token: Number((tokens ? cpuS * 1e6 / tokens : 0).toFixed(2)),
    peak_rss_kb: process.resourceUsage().maxRSS }));
