// Which months have figures and which are final (issue #37): a month that ended before the
// account existed is refused with the account's first month, not answered as an empty closed
// month; an ended month is closed only once the close job closed it; and the operator's report
// refuses a month that is no month and a format it does not write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { operatorCommands } from '../../src/operator/commands.ts';
import { closeMonth } from '../../src/usage/close-month.ts';
import { monthOf, previousMonth } from '../../src/usage/node-time.ts';
import type { AppError } from '../../src/errors.ts';

describe(`usage months, on ${databaseLabel()}`, () => {
  let t: TestServer;
  const report = (options: Record<string, string>) =>
    (operatorCommands['usage report']!(t.server.services, { positional: [], options }) as Promise<any>).then(
      (r) => r,
      (e: AppError) => ({ refused: { code: e.code, message: e.message } }),
    );
  const thisMonth = monthOf(new Date());
  const lastMonth = previousMonth(thisMonth);
  const monthBefore = previousMonth(lastMonth);
  const threeBack = previousMonth(monthBefore);

  beforeAll(async () => {
    // The close job closes last month (only that one: a month missed earlier stays open).
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('refuses a month that ended before the account existed, naming its first month', async () => {
    const user = await t.createUser();
    const r = await t.call(`/api/usage?month=${lastMonth}`, { token: user.token });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_request', details: { firstMonth: thisMonth } });
    expect(r.json.error.message).toBe(`${lastMonth} ended before the account was created; its first month is ${thisMonth}`);
    expect((await t.call(`/api/usage?month=${thisMonth}`, { token: user.token })).json).toMatchObject({ month: thisMonth, closed: false });
  });

  it('answers an ended month closed only once the close job closed it', async () => {
    const user = await t.createUser();
    // An account older than the month before last (as one made before it would be); the close job
    // closed last month only, so the month before stays open until it is closed.
    await t.server.db.query(`UPDATE accounts SET created_at = $2 WHERE id = $1`, [user.id, new Date(`${threeBack}-15T00:00:00Z`)]);
    expect((await t.call(`/api/usage?month=${monthBefore}`, { token: user.token })).json).toMatchObject({ month: monthBefore, closed: false });
    expect((await report({ month: monthBefore })).closed).toBe(false);
    expect(await closeMonth(t.server.db, monthBefore)).toBe(true);
    expect((await t.call(`/api/usage?month=${monthBefore}`, { token: user.token })).json).toMatchObject({ month: monthBefore, closed: true });
    expect((await report({ month: monthBefore })).closed).toBe(true);
  });

  it("the report refuses a month that is no month and a format it does not write, saying which", async () => {
    expect(await report({ month: '2026-13' })).toEqual({ refused: { code: 'invalid_request', message: '--month 2026-13 is not a calendar month: YYYY-MM, with a month from 01 to 12' } });
    expect(await report({})).toEqual({ refused: { code: 'invalid_request', message: '--month YYYY-MM is required (a calendar month, UTC)' } });
    expect(await report({ month: thisMonth, format: 'xml' })).toEqual({ refused: { code: 'invalid_request', message: '--format xml is not a report format: csv or json (text when left out)' } });
    expect(await report({ month: thisMonth, format: 'csv' })).toMatchObject({ month: thisMonth, closed: false });
  });
});
