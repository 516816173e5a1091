// What the tests that fire alerts from a real service expect of promtool, shared by their files:
// each alert looked at at its case's time (alert-cases.ts), firing with given labels or not at all.
import { ALERT_CASES } from './alert-cases.ts';
import { alertRules, type Expectation } from './promtool.ts';

export const evalTime = (alert: string) => ALERT_CASES[alert]!.evalTime;

/**
 * The nodes' volume here is the test machine's disk, whose fullness is not the service's to promise
 * (RlnCloudNodeStorageNearlyFull's cases are alert-cases.ts'; its metric, test/api/node-storage.test.ts).
 */
export const MACHINE_DEPENDENT = ['RlnCloudNodeStorageNearlyFull'];

/** Every alert of the rules at its case's time: firing with `firing[alert]`'s labels, or not at all. */
export const expectAll = (firing: Record<string, Array<Record<string, string>>>, except: string[] = []): Expectation[] =>
  alertRules()
    .map((r) => r.alert)
    .filter((alert) => !except.includes(alert))
    .map((alert) => ({ alert, evalTime: evalTime(alert), firing: firing[alert] ?? [] }));

/** `alert` at its case's time, firing once for each of `firing`'s label sets. */
export const fires = (alert: string, ...firing: Array<Record<string, string>>): Expectation => ({ alert, evalTime: evalTime(alert), firing });

/** Polls `check` until it answers something, for at most `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
