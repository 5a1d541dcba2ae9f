import Testing

/// Every suite that runs a gateway, one test at a time. Run side by side, two gateways shutting
/// down at the same moment hung once in three runs (session 6). A hang found since, whose test is
/// `aGatewayThatClosesDuringTheHandshakeIsAFailedAttempt` (a client connect that waited for good
/// on a gateway closing during its handshake), may have been it; not tried side by side again.
@Suite(.serialized) enum GatewaySuites {}
