// What a node token is sealed with besides the key: its id, so a sealed token copied onto another row does not open.
export const nodeTokenSealContext = (tokenId: string) => `node-token:${tokenId}`;
