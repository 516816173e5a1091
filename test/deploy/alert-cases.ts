// One case per alert of deploy/monitoring/rules.yml for `promtool test rules`: input series (in
// promtool's notation, one sample a minute) on which it fires, and near misses on which it stays
// quiet. monitoring.test.ts fails when an alert has no case, or a case no alert.

export interface AlertCase {
  /** When to look: past the rule's `for`, with its rate window still holding the input's changes. */
  evalTime: string;
  fires: Record<string, string>;
  /** The labels the alert carries besides alertname and severity. */
  labels: Record<string, string>;
  quiet: Record<string, string>;
}

const job = 'job="rln-cloud"';
const one = `${job},instance="10.0.0.5:9464"`;
const two = `${job},instance="10.0.0.6:9464"`;
const replica = { job: 'rln-cloud', instance: '10.0.0.5:9464' };

export const ALERT_CASES: Record<string, AlertCase> = {
  RlnCloudReplicaDown: {
    evalTime: '7m',
    fires: { [`up{${one}}`]: '0+0x10', [`up{${two}}`]: '1+0x10' },
    labels: replica,
    // down for 3 minutes only, then back
    quiet: { [`up{${one}}`]: '1 1 0 0 0 1+0x5', [`up{${two}}`]: '1+0x10' },
  },
  RlnCloudNoReplicaUp: {
    evalTime: '7m',
    fires: { [`up{${one}}`]: '0+0x10', [`up{${two}}`]: '0+0x10' },
    // absent() of a filtered vector carries no labels
    labels: {},
    quiet: { [`up{${one}}`]: '0+0x10', [`up{${two}}`]: '1+0x10' },
  },
  RlnCloudBuildsFailing: {
    evalTime: '15m',
    fires: {
      [`rlncloud_builds_total{${one},action="create",result="failure"}`]: '0+2x20',
      [`rlncloud_builds_total{${one},action="create",result="success"}`]: '0+2x20',
    },
    labels: {},
    // one build in eleven fails
    quiet: {
      [`rlncloud_builds_total{${one},action="create",result="failure"}`]: '0+1x20',
      [`rlncloud_builds_total{${one},action="create",result="success"}`]: '0+10x20',
    },
  },
  RlnCloudWebhookDeliveriesFailing: {
    evalTime: '15m',
    fires: {
      [`rlncloud_webhook_deliveries_total{${one},result="retry"}`]: '0+5x20',
      [`rlncloud_webhook_deliveries_total{${two},result="succeeded"}`]: '0+1x20',
    },
    labels: {},
    quiet: {
      [`rlncloud_webhook_deliveries_total{${one},result="retry"}`]: '0+1x20',
      [`rlncloud_webhook_deliveries_total{${two},result="succeeded"}`]: '0+10x20',
    },
  },
  RlnCloudWebhookBacklog: {
    evalTime: '20m',
    fires: {
      [`rlncloud_webhook_deliveries_unfinished{${one},state="pending"}`]: '3+0x25',
      [`rlncloud_webhook_deliveries_unfinished{${two},state="pending"}`]: '3+0x25',
      [`rlncloud_webhook_deliveries_total{${one},result="succeeded"}`]: '5+0x25',
    },
    labels: {},
    // a backlog that drains: deliveries keep succeeding
    quiet: {
      [`rlncloud_webhook_deliveries_unfinished{${one},state="pending"}`]: '3+0x25',
      [`rlncloud_webhook_deliveries_total{${one},result="succeeded"}`]: '5+1x25',
    },
  },
  RlnCloudRolloutPaused: {
    evalTime: '7m',
    fires: { [`rlncloud_rollouts{${one},state="paused"}`]: '1+0x10', [`rlncloud_rollouts{${two},state="paused"}`]: '1+0x10' },
    labels: {},
    quiet: { [`rlncloud_rollouts{${one},state="paused"}`]: '0+0x10', [`rlncloud_rollouts{${one},state="running"}`]: '1+0x10' },
  },
  RlnCloudDatabaseUnreachable: {
    evalTime: '4m',
    fires: { [`rlncloud_rollouts_in_progress{${one}}`]: 'NaN NaN NaN NaN NaN NaN', [`rlncloud_rollouts_in_progress{${two}}`]: '0+0x5' },
    labels: replica,
    // no rollout running is 0, a fact, not an outage
    quiet: { [`rlncloud_rollouts_in_progress{${one}}`]: '0+0x5' },
  },
  RlnCloudDatabaseSlow: {
    evalTime: '15m',
    // nine statements in ten take between 0.1 and 1 s
    fires: {
      [`rlncloud_db_query_duration_seconds_bucket{${one},le="0.1"}`]: '0+10x20',
      [`rlncloud_db_query_duration_seconds_bucket{${one},le="1"}`]: '0+100x20',
      [`rlncloud_db_query_duration_seconds_bucket{${one},le="+Inf"}`]: '0+100x20',
    },
    labels: {},
    quiet: {
      [`rlncloud_db_query_duration_seconds_bucket{${one},le="0.1"}`]: '0+100x20',
      [`rlncloud_db_query_duration_seconds_bucket{${one},le="1"}`]: '0+100x20',
      [`rlncloud_db_query_duration_seconds_bucket{${one},le="+Inf"}`]: '0+100x20',
    },
  },
  RlnCloudAuthenticationRolloutPaused: {
    evalTime: '7m',
    fires: { [`rlncloud_authentication_rollout{${one},state="paused"}`]: '1+0x10', [`rlncloud_authentication_rollout{${two},state="paused"}`]: '1+0x10' },
    labels: {},
    // paused for 3 minutes, then resumed
    quiet: { [`rlncloud_authentication_rollout{${one},state="paused"}`]: '1+0x3 0+0x10' },
  },
  RlnCloudDatabasePoolExhausted: {
    evalTime: '12m',
    fires: { [`rlncloud_db_pool_waiting_requests{${one}}`]: '2+0x15' },
    labels: replica,
    // statements wait now and then, and the pool catches up between scrapes
    quiet: { [`rlncloud_db_pool_waiting_requests{${one}}`]: '0 2 0 2 0 2 0 2 0 2 0 2 0 2 0' },
  },
  RlnCloudNodesFailed: {
    evalTime: '12m',
    fires: { [`rlncloud_nodes{${one},status="FAILED"}`]: '1+0x15', [`rlncloud_nodes{${two},status="FAILED"}`]: '1+0x15' },
    labels: {},
    // failed for 5 minutes, then started again
    quiet: { [`rlncloud_nodes{${one},status="FAILED"}`]: '1+0x5 0+0x10' },
  },
  RlnCloudNodeStorageLost: {
    evalTime: '7m',
    fires: { [`rlncloud_nodes{${one},status="STORAGE_LOST"}`]: '1+0x10', [`rlncloud_nodes{${two},status="STORAGE_LOST"}`]: '1+0x10' },
    labels: {},
    // lost for 3 minutes, then its volume was brought back (or the node recovered)
    quiet: { [`rlncloud_nodes{${one},status="STORAGE_LOST"}`]: '1+0x3 0+0x10' },
  },
  RlnCloudAuditRecordFailing: {
    evalTime: '5m',
    fires: { [`rlncloud_audit_record_failures_total{${one}}`]: '0 0 1+0x20' },
    labels: {},
    // failures long past: the counter has not moved for the last 15 minutes
    quiet: { [`rlncloud_audit_record_failures_total{${one}}`]: '3+0x20' },
  },
  RlnCloudNodePortsNearlyExhausted: {
    evalTime: '17m',
    fires: { [`rlncloud_node_ports{${one},state="free"}`]: '4+0x20', [`rlncloud_node_ports{${one},state="used"}`]: '96+0x20' },
    labels: replica,
    quiet: { [`rlncloud_node_ports{${one},state="free"}`]: '40+0x20', [`rlncloud_node_ports{${one},state="used"}`]: '60+0x20' },
  },
  RlnCloudNodeStorageNearlyFull: {
    evalTime: '17m',
    // every replica reports the same value: one alert, not one per replica
    fires: { [`rlncloud_node_storage_fullest_ratio{${one}}`]: '0.95+0x20', [`rlncloud_node_storage_fullest_ratio{${two}}`]: '0.95+0x20' },
    labels: {},
    // 90% exactly, or a spike above it shorter than 15 minutes
    quiet: { [`rlncloud_node_storage_fullest_ratio{${one}}`]: '0.9+0x20', [`rlncloud_node_storage_fullest_ratio{${two}}`]: '0.5+0x10 0.97+0x10' },
  },
  RlnCloudApiErrors: {
    evalTime: '12m',
    fires: {
      [`rlncloud_api_request_duration_seconds_count{${one},method="GET",route="/api/nodes",status_class="5xx"}`]: '0+10x15',
      [`rlncloud_api_request_duration_seconds_count{${two},method="GET",route="/api/nodes",status_class="2xx"}`]: '0+50x15',
    },
    labels: {},
    // one answer in a hundred fails
    quiet: {
      [`rlncloud_api_request_duration_seconds_count{${one},method="GET",route="/api/nodes",status_class="5xx"}`]: '0+1x15',
      [`rlncloud_api_request_duration_seconds_count{${two},method="GET",route="/api/nodes",status_class="2xx"}`]: '0+99x15',
    },
  },
  RlnCloudApiSlow: {
    evalTime: '15m',
    // nine answers in ten take between 2.5 and 10 s
    fires: {
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/nodes",status_class="2xx",le="2.5"}`]: '0+10x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/nodes",status_class="2xx",le="10"}`]: '0+100x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/nodes",status_class="2xx",le="+Inf"}`]: '0+100x20',
    },
    labels: {},
    // an event stream open for minutes is no slow answer
    quiet: {
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/nodes",status_class="2xx",le="2.5"}`]: '0+100x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/nodes",status_class="2xx",le="10"}`]: '0+100x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/nodes",status_class="2xx",le="+Inf"}`]: '0+100x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/events/stream",status_class="2xx",le="2.5"}`]: '0+0x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/events/stream",status_class="2xx",le="10"}`]: '0+0x20',
      [`rlncloud_api_request_duration_seconds_bucket{${one},method="GET",route="/api/events/stream",status_class="2xx",le="+Inf"}`]: '0+1000x20',
    },
  },
  RlnCloudGatewayErrors: {
    evalTime: '12m',
    fires: {
      [`rlncloud_gateway_requests_total{${one},gateway="mtls",status_class="5xx"}`]: '0+20x15',
      [`rlncloud_gateway_requests_total{${one},gateway="mtls",status_class="2xx"}`]: '0+80x15',
      [`rlncloud_gateway_requests_total{${one},gateway="bearer",status_class="2xx"}`]: '0+1000x15',
    },
    labels: { gateway: 'mtls' },
    // a few node errors among many answers
    quiet: {
      [`rlncloud_gateway_requests_total{${one},gateway="mtls",status_class="5xx"}`]: '0+2x15',
      [`rlncloud_gateway_requests_total{${one},gateway="mtls",status_class="2xx"}`]: '0+98x15',
    },
  },
  RlnCloudGatewaySlow: {
    evalTime: '20m',
    fires: {
      [`rlncloud_gateway_request_duration_seconds_bucket{${one},gateway="bearer",status_class="2xx",le="5"}`]: '0+10x25',
      [`rlncloud_gateway_request_duration_seconds_bucket{${one},gateway="bearer",status_class="2xx",le="30"}`]: '0+100x25',
      [`rlncloud_gateway_request_duration_seconds_bucket{${one},gateway="bearer",status_class="2xx",le="+Inf"}`]: '0+100x25',
    },
    labels: { gateway: 'bearer' },
    // one slow call in twenty (a channel opening)
    quiet: {
      [`rlncloud_gateway_request_duration_seconds_bucket{${one},gateway="bearer",status_class="2xx",le="5"}`]: '0+95x25',
      [`rlncloud_gateway_request_duration_seconds_bucket{${one},gateway="bearer",status_class="2xx",le="30"}`]: '0+100x25',
      [`rlncloud_gateway_request_duration_seconds_bucket{${one},gateway="bearer",status_class="2xx",le="+Inf"}`]: '0+100x25',
    },
  },
  RlnCloudVssWritesFailing: {
    evalTime: '6m',
    // replica one's puts all fail (its database or blob store gone) while replica two's succeed
    fires: {
      [`rlncloud_vss_requests_total{${one},operation="putObjects",outcome="error"}`]: '0+5x10',
      [`rlncloud_vss_requests_total{${one},operation="getObject",outcome="ok"}`]: '0+5x10',
      [`rlncloud_vss_requests_total{${two},operation="putObjects",outcome="ok"}`]: '0+50x10',
    },
    labels: { instance: '10.0.0.5:9464' },
    // failures among writes that succeed, and failures that stopped 3 minutes ago
    quiet: {
      [`rlncloud_vss_requests_total{${one},operation="putObjects",outcome="error"}`]: '0+5x10',
      [`rlncloud_vss_requests_total{${one},operation="putObjects",outcome="ok"}`]: '0+1x10',
      [`rlncloud_vss_requests_total{${two},operation="deleteObject",outcome="error"}`]: '0+5x3 15+0x7',
    },
  },
  RlnCloudVssErrors: {
    evalTime: '12m',
    // two requests in a hundred fail
    fires: {
      [`rlncloud_vss_requests_total{${one},operation="putObjects",outcome="error"}`]: '0+2x15',
      [`rlncloud_vss_requests_total{${two},operation="putObjects",outcome="ok"}`]: '0+98x15',
    },
    labels: {},
    // conflicts and refusals are the clients': only server errors count, and one in a thousand is not enough
    quiet: {
      [`rlncloud_vss_requests_total{${one},operation="putObjects",outcome="error"}`]: '0+1x15',
      [`rlncloud_vss_requests_total{${one},operation="putObjects",outcome="conflict"}`]: '0+100x15',
      [`rlncloud_vss_requests_total{${two},operation="getObject",outcome="refused"}`]: '0+100x15',
      [`rlncloud_vss_requests_total{${two},operation="putObjects",outcome="ok"}`]: '0+999x15',
    },
  },
  RlnCloudVssSlow: {
    evalTime: '15m',
    // one write in ten takes between 0.25 and 1 s
    fires: {
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="putObjects",le="0.25"}`]: '0+90x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="putObjects",le="1"}`]: '0+100x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="putObjects",le="+Inf"}`]: '0+100x20',
    },
    labels: {},
    // fast writes, and slow reads (a restore listing and reading large values)
    quiet: {
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="putObjects",le="0.25"}`]: '0+100x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="putObjects",le="1"}`]: '0+100x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="putObjects",le="+Inf"}`]: '0+100x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="getObject",le="0.25"}`]: '0+0x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="getObject",le="1"}`]: '0+0x20',
      [`rlncloud_vss_request_duration_seconds_bucket{${one},operation="getObject",le="+Inf"}`]: '0+100x20',
    },
  },
  RlnCloudVssStoreOverSoftLimit: {
    evalTime: '17m',
    // every replica reports the same count: one alert, not one per replica
    fires: { [`rlncloud_vss_stores_over_soft_limit{${one}}`]: '1+0x20', [`rlncloud_vss_stores_over_soft_limit{${two}}`]: '1+0x20' },
    labels: {},
    // none past the limit, or one past it for less than 15 minutes (its old values deleted since)
    quiet: { [`rlncloud_vss_stores_over_soft_limit{${one}}`]: '0+0x20', [`rlncloud_vss_stores_over_soft_limit{${two}}`]: '0+0x10 1+0x5 0+0x5' },
  },
  RlnCloudVssPendingWrites: {
    evalTime: '12m',
    // every replica reports the same count: one alert, not one per replica
    fires: { [`rlncloud_vss_nodes_with_pending_writes{${one}}`]: '1+0x15', [`rlncloud_vss_nodes_with_pending_writes{${two}}`]: '1+0x15' },
    labels: {},
    // a node's queue that drains within a few minutes (a VSS hiccup), then none
    quiet: { [`rlncloud_vss_nodes_with_pending_writes{${one}}`]: '0+0x3 1+0x5 0+0x7', [`rlncloud_vss_nodes_with_pending_writes{${two}}`]: '0+0x15' },
  },
  RlnCloudReconcileStalled: {
    evalTime: '15m',
    // the holder's last pass at minute 2; the other replica never passes (its start, minute 0)
    fires: { [`rlncloud_reconcile_last_pass_timestamp_seconds{${one}}`]: '0 60 120+0x20', [`rlncloud_reconcile_last_pass_timestamp_seconds{${two}}`]: '0+0x22' },
    labels: {},
    // the lease moved to the other replica, which passes every minute
    quiet: { [`rlncloud_reconcile_last_pass_timestamp_seconds{${one}}`]: '0 60 120+0x20', [`rlncloud_reconcile_last_pass_timestamp_seconds{${two}}`]: '0 0 0 180+60x20' },
  },
  RlnCloudCertificateExpiringSoon: {
    evalTime: '70m',
    // the gateway's certificate with 20 days left on both replicas, the CA's years
    fires: {
      [`rlncloud_certificate_expiry_seconds{${one},certificate="mtls_server"}`]: '1728000-60x80',
      [`rlncloud_certificate_expiry_seconds{${two},certificate="mtls_server"}`]: '1728000-60x80',
      [`rlncloud_certificate_expiry_seconds{${one},certificate="ca"}`]: '315360000-60x80',
    },
    labels: { certificate: 'mtls_server' },
    // 30 days left: the self-issued one is renewed at the next start past that
    quiet: { [`rlncloud_certificate_expiry_seconds{${one},certificate="mtls_server"}`]: '2592000-60x80' },
  },
  RlnCloudCertificateExpiring: {
    evalTime: '10m',
    fires: { [`rlncloud_certificate_expiry_seconds{${one},certificate="ca"}`]: '172800-60x15' },
    labels: { certificate: 'ca' },
    // one replica restarted on the renewed certificate, the other not yet: the oldest counts
    quiet: { [`rlncloud_certificate_expiry_seconds{${one},certificate="ca"}`]: '345600-60x15' },
  },
};
