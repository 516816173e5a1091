// The client's address as the service sees it, read in one place so that the rule for proxies in
// front of the service (which hop to believe) changes here alone. Today: Fastify's request.ip.
import type { FastifyRequest } from 'fastify';

export const clientAddress = (request: FastifyRequest): string => request.ip;
