// Client certificates of a node for the mutual-TLS gateway: POST /api/nodes/{id}/generate-cert
// issues one (the private key is in this answer only), GET /api/nodes/{id}/certs lists them,
// DELETE /api/nodes/{id}/certs/{serial} revokes one (refused from the next request on).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NextCursor, NodeIdParams, pageParams } from '../schemas.ts';
import { MAX_PAGE } from '../../domain/paging.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';

const IssuedCertificate = Type.Object({
  certificate: Type.String({ description: 'The client certificate (PEM), bound to the user and the node.' }),
  certificateChain: Type.String({ description: "The service's CA certificate (PEM): the chain above the certificate, and what clients verify the gateway's server certificate with." }),
  privateKey: Type.String({ description: 'The private key (PKCS#8 PEM). Shown only here: the service never stores it.' }),
  publicKey: Type.String({ description: 'The public key (SPKI PEM).' }),
  nodeUrl: Type.String({ description: 'The node through the mutual-TLS gateway, user id included: append a route of the node, e.g. nodeinfo.' }),
  serial: Type.String({ description: 'Serial number, lowercase hexadecimal (to revoke it).' }),
  expiresAt: Type.String({ format: 'date-time' }),
});

const GenerateCertBody = Type.Object(
  {
    validitySeconds: Type.Optional(
      Type.Integer({ minimum: 1, description: 'How long the certificate is valid; default and maximum CLIENT_CERT_DAYS (30 days).' }),
    ),
  },
  { additionalProperties: false },
);
type GenerateCertBody = Static<typeof GenerateCertBody>;

export const Certificate = Type.Object({
  serial: Type.String({ description: 'Serial number, lowercase hexadecimal.' }),
  nodeId: Type.String(),
  fingerprint: Type.String({ description: 'SHA-256 of the DER certificate, lowercase hexadecimal.' }),
  status: Type.Union([Type.Literal('valid'), Type.Literal('expired'), Type.Literal('revoked')]),
  createdAt: Type.String({ format: 'date-time' }),
  notBefore: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const ListCertificatesQuery = Type.Object(pageParams('Certificates', 'default 200'), { additionalProperties: false });
type ListCertificatesQuery = Static<typeof ListCertificatesQuery>;

const SerialParams = Type.Object({
  id: NodeIdParams.properties.id,
  serial: Type.String({ maxLength: 128, description: 'The serial number in hexadecimal (colons and upper case accepted).' }),
});
type SerialParams = Static<typeof SerialParams>;

export function certificateRoutes(app: FastifyInstance, { certificates }: ApiDeps) {
  app.post<{ Params: NodeIdParams; Body: GenerateCertBody }>(
    '/api/nodes/:id/generate-cert',
    {
      config: { audit: { action: 'certificate.issued', target: nodeParam } },
      schema: {
        operationId: 'generateCertificate',
        summary: 'Issue a client certificate for the mutual-TLS gateway',
        description:
          'A new key pair and a certificate from the service CA, bound to the caller and the node. The private key is returned ' +
          'once and never stored. 409 `node_destroyed` for a destroyed node. A scoped token cannot issue or revoke certificates ' +
          '(403 `forbidden_scope`): a certificate has every right on its node and outlives the token.',
        tags: ['certificates'],
        params: NodeIdParams,
        body: GenerateCertBody,
        response: { 200: IssuedCertificate, ...errorResponses },
      },
      // The body is optional: no body at all means "the defaults".
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const user = userOf(request);
      return certificates.issue(user.accountId, request.params.id, request.body.validitySeconds, user.id);
    },
  );

  app.get<{ Params: NodeIdParams; Querystring: ListCertificatesQuery }>(
    '/api/nodes/:id/certs',
    {
      schema: {
        operationId: 'listCertificates',
        summary: "List a node's client certificates",
        description: 'Oldest first, in pages; revoked and expired ones too.',
        tags: ['certificates'],
        params: NodeIdParams,
        querystring: ListCertificatesQuery,
        response: { 200: Type.Object({ certificates: Type.Array(Certificate), nextCursor: NextCursor }), ...errorResponses },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return certificates.list(userOf(request).accountId, request.params.id, limit === undefined ? MAX_PAGE : Number(limit), cursor);
    },
  );

  app.delete<{ Params: SerialParams }>(
    '/api/nodes/:id/certs/:serial',
    {
      config: { audit: { action: 'certificate.revoked', target: (r) => (r.params as { serial: string }).serial } },
      schema: {
        operationId: 'revokeCertificate',
        summary: 'Revoke a client certificate',
        description:
          'The mutual-TLS gateway refuses the certificate from its next request on, also on open connections. Revoking twice keeps the first time. ' +
          'A scoped token cannot revoke certificates (403 `forbidden_scope`).',
        tags: ['certificates'],
        params: SerialParams,
        response: { 200: Type.Object({ message: Type.String(), data: Certificate }), ...errorResponses },
      },
    },
    async (request) => {
      const data = await certificates.revoke(userOf(request).accountId, request.params.id, request.params.serial);
      return { message: `Certificate ${data.serial} is revoked`, data };
    },
  );
}
