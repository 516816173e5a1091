// Which passwords a person may choose (sign-up, password reset): at least 8 characters, and not one
// zxcvbn-ts rates weak, with its dictionary of common passwords, names and words and the person's
// own address and the service's name as things an attacker would try first.
import { zxcvbn, zxcvbnOptions } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common';
import { AppError } from '../errors.ts';

zxcvbnOptions.setOptions({ dictionary, graphs: adjacencyGraphs });

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;
// zxcvbn's 3: "safely unguessable" against an online attack and a slowed offline one (about 10^8
// guesses), what most services that use it ask for.
const MIN_SCORE = 3;
// Matching is quadratic in the length; past this many characters a password is long enough anyway.
const SCORED_CHARACTERS = 100;

/** Throws 400 weak_password, saying why and what would help, when the password is not good enough. */
export function checkPasswordStrength(password: string, userInputs: string[]): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('weak_password', `a password needs at least ${MIN_PASSWORD_LENGTH} characters`, { field: 'password' });
  }
  const result = zxcvbn(password.slice(0, SCORED_CHARACTERS), userInputs.flatMap((s) => [s, ...s.split(/[@.+_-]/)]).filter((s) => s.length >= 3));
  if (result.score < MIN_SCORE) {
    // zxcvbn's feedback comes as keys (no language pack is loaded): passed on for clients to word.
    const reasons = [result.feedback.warning, ...result.feedback.suggestions].filter((s): s is string => typeof s === 'string' && s.length > 0);
    throw new AppError('weak_password', 'this password is too easy to guess (a common password, a pattern, or your own address); a few unrelated words make a strong one', {
      field: 'password',
      score: result.score,
      reasons,
    });
  }
}
