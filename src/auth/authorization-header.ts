// The API token an Authorization header carries. Two forms mean the same: `Bearer <token>` (the
// scheme in any case, RFC 9110) and the bare `<token>` that clients of the original hosted service
// send (its own API test suite and a wallet built on it store and send the value as given). Any
// other scheme (`Basic ...`), an empty value or more than one word carries no token.

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;
const BARE = /^\s*(\S+)\s*$/;

export function tokenFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const bearer = BEARER.exec(header);
  if (bearer) return bearer[1];
  const bare = BARE.exec(header)?.[1];
  // The scheme's name alone ("Bearer" with nothing after it) is an empty credential, not a token.
  return bare !== undefined && bare.toLowerCase() !== 'bearer' ? bare : undefined;
}
