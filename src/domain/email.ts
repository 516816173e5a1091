// One form of an email address for every address stored or compared (users, invitations, sign-in,
// the operator's commands): trimmed, Unicode NFC, then lowercased (JavaScript's toLowerCase, the
// full Unicode lowercase mapping; no locale), then NFC again (lowercasing can leave a sequence
// that NFC composes, e.g. U+0130). An "é" written precomposed or as "e" + U+0301, in any case,
// is one address: one user, one invitation, one seat. Migration 0027 brought stored rows to it.
export const normalEmail = (raw: string) => raw.trim().normalize('NFC').toLowerCase().normalize('NFC');
