-- Ports belong to the runtime. The process runtime still hands each node a pair of host ports;
-- on Kubernetes every pod has its own address and fixed ports, so a node has no REST port of its
-- own (NULL) and its peer port is the one its Service was given (NULL until known, or with a
-- load balancer that exposes RLN's default 9735). The unique indexes skip NULLs, as before.
ALTER TABLE nodes ALTER COLUMN rest_port DROP NOT NULL;
ALTER TABLE nodes ALTER COLUMN peer_port DROP NOT NULL;
-- Where Lightning peers reach the node when the runtime says (a NodePort's host, a load
-- balancer's address); NULL: the service's public host.
ALTER TABLE nodes ADD COLUMN peer_host text;
