// A daemon's buffered answer to one of the service's own calls, and what its refusals mean. RLN
// answers errors as `{"error": "<text>", "code": <status>, "name": "<Name>"}`; a refusal becomes one
// of the service's error codes with the node's own words kept, so a record or an API error says
// what the node said.
import { AppError } from '../errors.ts';

export interface RlnAnswer {
  status: number;
  /** Header names and values as received (name, value, name, value, ...). */
  rawHeaders: string[];
  body: Buffer;
}

export const isSuccess = (status: number) => status >= 200 && status < 300;

/** The answer's body as JSON, or undefined when it is not JSON. */
export function answerJson(answer: RlnAnswer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(answer.body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The service's error for a refusal of the node's (`what`: the call, as in "cannot <what> now"). */
export function nodeRefusal(answer: RlnAnswer, what = 'unlock'): AppError {
  const parsed = answerJson(answer) ?? {};
  const text = typeof parsed.error === 'string' ? parsed.error.slice(0, 500) : `status ${answer.status}`;
  const details = { nodeStatus: answer.status, ...(typeof parsed.name === 'string' ? { nodeError: parsed.name } : {}) };
  switch (answer.status) {
    case 401:
      return new AppError('wrong_password', `the node refused the password: ${text}`, details);
    case 403:
      return new AppError('node_state_conflict', `the node cannot ${what} now: ${text}`, details);
    case 400:
      return new AppError('invalid_request', `the node refused the ${what}: ${text}`, details);
    default:
      return new AppError('node_error', `the node failed to ${what}: ${text}`, details);
  }
}
