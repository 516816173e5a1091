// The answer of the ownership transfer routes (accounts/ownership-transfer.ts presents it).
import { Type, type Static } from '@sinclair/typebox';
import { ID_PATTERN } from '../schemas.ts';

export const Transfer = Type.Object({
  toUserId: Type.String({ description: 'The admin the account is offered to.' }),
  toEmail: Type.String(),
  offeredBy: Type.String({ description: 'The owner who offered it.' }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time', description: 'Seven days after the offer.' }),
});

export const OfferBody = Type.Object({ userId: Type.String({ pattern: ID_PATTERN, description: 'An admin of the account.' }) }, { additionalProperties: false });
export type OfferBody = Static<typeof OfferBody>;
