import Metrics
import Prometheus
import Synchronization

/// The gateway's metrics through swift-metrics, kept in a Prometheus registry of the gateway's
/// own (not the process-wide `MetricsSystem`, so that several gateways in one process — tests —
/// count apart), served as Prometheus text at `GET /metrics`.
final class GatewayMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let connections: Metrics.Gauge
    private let connectionsOpened: Metrics.Counter
    private let messagesReceived: Metrics.Counter
    private let framesSent: Metrics.Counter

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        connections = Metrics.Gauge(label: "chatfeed_gateway_connections", factory: factory)
        connectionsOpened = Metrics.Counter(label: "chatfeed_gateway_connections_opened_total", factory: factory)
        messagesReceived = Metrics.Counter(label: "chatfeed_gateway_messages_received_total", factory: factory)
        framesSent = Metrics.Counter(label: "chatfeed_gateway_frames_sent_total", factory: factory)
        connections.record(0)
    }

    private let open = Atomic<Int>(0)

    func connectionOpened() {
        connectionsOpened.increment()
        connections.record(open.add(1, ordering: .relaxed).newValue)
    }

    func connectionClosed() {
        connections.record(open.subtract(1, ordering: .relaxed).newValue)
    }

    func messageReceived() { messagesReceived.increment() }
    func frameSent() { framesSent.increment() }

    /// Every metric in the Prometheus text format.
    var text: [UInt8] { registry.emitToBuffer() }
}
