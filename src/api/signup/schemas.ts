// What the public sign-up and password reset routes take and answer.
import { Type } from '@sinclair/typebox';

export const tags = ['sign-up and password reset'];

export const EmailField = Type.String({ minLength: 1, maxLength: 320, description: 'An email address; compared without regard to case.' });
export const PasswordField = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'At least 8 characters, and not one the strength check (zxcvbn-ts) rates weak or common: 400 `weak_password` says so.',
});
export const LinkTokenField = Type.String({ minLength: 1, maxLength: 200, description: 'The secret of the emailed link (after `#token=`).' });

export const Accepted = Type.Object({
  message: Type.String({ description: 'The same for every address, whether or not it has an account.' }),
});
