import { describe, expect, it } from 'vitest';
import { usageReportCsv } from './usage-csv.ts';

const row = { accountId: 'a1', ownerEmail: 'o@example.com', plan: 'starter', nodeId: 'n1', runningSeconds: 3600, pausedSeconds: 60, apiCalls: 5, gatewayCalls: 7 };

describe('usageReportCsv', () => {
  it('writes a header and a row per account and node', () => {
    expect(usageReportCsv({ rows: [row, { ...row, nodeId: '', runningSeconds: 0, pausedSeconds: 0, gatewayCalls: 0 }] })).toBe(
      'account_id,owner_email,plan,node_id,running_seconds,paused_seconds,api_calls,gateway_calls\n' + 'a1,o@example.com,starter,n1,3600,60,5,7\n' + 'a1,o@example.com,starter,,0,0,5,0\n',
    );
  });

  it('quotes what needs it and defuses formulas', () => {
    expect(usageReportCsv({ rows: [{ ...row, ownerEmail: '=cmd,"x"' }] }).split('\n')[1]).toBe(`a1,"'=cmd,""x""",starter,n1,3600,60,5,7`);
  });
});
