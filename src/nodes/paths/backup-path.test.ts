import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { confineBackupBody, USER_BACKUP_PREFIX } from './backup-path.ts';

const pathFor = (name: string) => `/data/storage/${name}`;
const confined = (body: unknown) => JSON.parse(confineBackupBody(JSON.stringify(body), pathFor).toString('utf8'));

describe('confineBackupBody', () => {
  it("rewrites a plain file name to the service's path in the node's storage, the other fields unchanged", () => {
    expect(confined({ backup_path: 'my-backup.zip', password: 'p' })).toEqual({ backup_path: `/data/storage/${USER_BACKUP_PREFIX}my-backup.zip`, password: 'p' });
  });

  it('refuses anything but a plain file name with a 400, never naming the password', () => {
    for (const backup_path of ['../x', '/etc/passwd', 'a/b', 'a\\b', '.', '..', '.x', '', 'x.partial', 'a'.repeat(101), 'é', 'x\n', 7, null, undefined]) {
      let err: unknown;
      try {
        confined({ backup_path, password: 'secret-password' });
      } catch (e) {
        err = e;
      }
      expect(err, String(backup_path)).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).message).not.toContain('secret-password');
    }
  });

  it('refuses a body that is not a JSON object', () => {
    for (const text of ['', 'x', '[]', '"x"', 'null', '1']) expect(() => confineBackupBody(text, pathFor), text).toThrow(AppError);
  });
});
