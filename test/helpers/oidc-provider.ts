// A real OpenID provider (the oidc-provider package) on loopback for sign-in tests. Its login step
// signs in whoever the test names next (`as`), with the claims the test gave that person; consent
// is granted at once, as a company's provider does for its own applications.
import { createServer, type Server } from 'node:http';
import { Provider } from 'oidc-provider';
import { freePort } from './ports.ts';

export interface ProviderPerson {
  email?: string;
  email_verified?: boolean;
  amr?: string[];
}

export interface TestOidcProvider {
  issuer: string;
  /** Registers clients once the service's callback URL is known. */
  start(clients: { clientId: string; clientSecret: string; redirectUri: string }[]): Promise<void>;
  /** The next login at the provider signs in `subject`, who has `claims`. */
  as(subject: string, claims?: ProviderPerson): void;
  stop(): Promise<void>;
}

export async function createOidcProvider(): Promise<TestOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const people = new Map<string, ProviderPerson>();
  let next = 'nobody';
  let server: Server | undefined;
  return {
    issuer,
    as(subject, claims = {}) {
      people.set(subject, claims);
      next = subject;
    },
    async start(clients) {
      const provider = new Provider(issuer, {
        clients: clients.map((c) => ({
          client_id: c.clientId,
          client_secret: c.clientSecret,
          redirect_uris: [c.redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        })),
        // amr with the openid scope: the login's `amr` reaches the ID token only as a claim a scope asks for.
        claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'] },
        // The service reads the person from the ID token, not from userinfo.
        conformIdTokenClaims: false,
        cookies: { keys: ['test-cookie-key'] },
        features: { devInteractions: { enabled: false } },
        pkce: { required: () => true },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        async findAccount(_ctx, sub) {
          const person = people.get(sub);
          if (!person) return undefined;
          return { accountId: sub, claims: async () => ({ sub, ...person }) };
        },
        async loadExistingGrant(ctx) {
          const oidc = ctx.oidc;
          const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session!.accountId! });
          grant.addOIDCScope('openid email');
          await grant.save();
          return grant;
        },
      });
      const handle = provider.callback();
      server = createServer(async (req, res) => {
        if (req.url?.startsWith('/interaction/')) {
          const amr = people.get(next)?.amr;
          await provider.interactionFinished(req, res, { login: { accountId: next, ...(amr && { amr }) } }, { mergeWithLastSubmission: false });
          return;
        }
        handle(req, res);
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    },
    async stop() {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    },
  };
}

/**
 * Follows the redirects of a sign-in through the provider, keeping the provider's cookies, until
 * one points back at `serviceBase`; answers that URL (the service's callback with code and state).
 */
export async function throughProvider(startUrl: string, serviceBase: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = startUrl;
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(serviceBase)) return url;
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider answered ${res.status} without a redirect at ${url}: ${await res.text()}`);
    url = new URL(location, url).toString();
  }
  throw new Error('too many redirects at the provider');
}

export interface IdTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  nonce?: string;
  [claim: string]: unknown;
}

export interface HostileOidcProvider {
  issuer: string;
  /** Each nonce the service sent, oldest first. */
  nonces: string[];
  /** What the next ID token says, from what an honest one would say. */
  tamper(edit: (honest: IdTokenClaims) => IdTokenClaims): void;
  stop(): Promise<void>;
}

/**
 * A provider that signs whatever ID token the test tells it to, with a key it publishes: what
 * openid-client must refuse (another audience, another issuer, an old nonce) it refuses even when
 * the signature is good.
 */
export async function startHostileProvider(clientId: string): Promise<HostileOidcProvider> {
  const { generateKeyPair, exportJWK, SignJWT } = await import('jose');
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const nonces: string[] = [];
  let edit = (honest: IdTokenClaims) => honest;
  const json = (res: import('node:http').ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (url.pathname === '/jwks') return json(res, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      nonces.push(url.searchParams.get('nonce')!);
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', `code-${nonces.length}`);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (url.pathname === '/token') {
      const claims = edit({ iss: issuer, aud: clientId, sub: 'hostile-subject', nonce: nonces.at(-1), email: 'hostile@example.com' });
      edit = (honest) => honest;
      const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuedAt().setExpirationTime('5m').sign(privateKey);
      return json(res, { access_token: 'opaque', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    nonces,
    tamper(next) {
      edit = next;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
