// The official `openai` SDK pointed at a route of the suite's mock (openai.test.mjs, responses.test.mjs):
// unmodified but for baseURL (the route's URL plus /v1, as OpenAI's base URL ends) and a 10 s timeout.
import OpenAI from 'openai';

export function openaiClient(suite, route, opts = {}) {
  return new OpenAI({ apiKey: 'sk-test', baseURL: `${suite.mock.url(route)}/v1`, timeout: 10_000, ...opts });
}
