import ChatfeedEngine
import Metrics
import Prometheus
import Synchronization

/// The gateway's metrics through swift-metrics, kept in a Prometheus registry of the gateway's
/// own (not the process-wide `MetricsSystem`, so that several gateways in one process — tests —
/// count apart), served as Prometheus text at `GET /metrics`.
///
/// What the gateway sees on its connections: connections, the engine's sessions, requests by method, errors by method
/// and code, batches and resets sent, subscriptions made and ended (gateway sessions only); and,
/// as the engine's observer, each group commit's size and time. The commit→send latency of a
/// batch is the time from the latest group commit to the moment its frame was written to the
/// socket (a batch that waited for an ack counts its wait).
final class GatewayMetrics: EngineObserver, Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let connections: Metrics.Gauge
    private let connectionsOpened: Metrics.Counter
    private let refused: Mutex<[String: Metrics.Counter]> = Mutex([:])
    private let requests: Mutex<[String: Metrics.Counter]> = Mutex([:])
    private let errors: Mutex<[String: Metrics.Counter]> = Mutex([:])
    private let batches: Metrics.Counter
    private let resets: Metrics.Counter
    private let subscriptions: Metrics.Gauge
    private let sessions: Metrics.Gauge
    private let commitWrites: Metrics.Recorder
    private let commitTime: Metrics.Timer
    private let commitToSend: Metrics.Timer
    /// The end of the latest group commit, in nanoseconds since `epoch`.
    private let lastCommit = Atomic<Int64>(-1)
    private let epoch = ContinuousClock.now
    private let open = Atomic<Int>(0)
    private let subscribed = Atomic<Int>(0)

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets["chatfeed_group_commit_writes"] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
        factory.durationHistogramBuckets["chatfeed_commit_to_send_seconds"] = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.factory = factory
        commitWrites = Metrics.Recorder(label: "chatfeed_group_commit_writes", factory: factory)
        commitTime = Metrics.Timer(label: "chatfeed_group_commit_seconds", factory: factory)
        commitToSend = Metrics.Timer(label: "chatfeed_commit_to_send_seconds", factory: factory)
        connections = Metrics.Gauge(label: "chatfeed_gateway_connections", factory: factory)
        connectionsOpened = Metrics.Counter(label: "chatfeed_gateway_connections_opened_total", factory: factory)
        batches = Metrics.Counter(label: "chatfeed_gateway_batches_sent_total", factory: factory)
        resets = Metrics.Counter(label: "chatfeed_gateway_resets_sent_total", factory: factory)
        subscriptions = Metrics.Gauge(label: "chatfeed_gateway_subscriptions", factory: factory)
        sessions = Metrics.Gauge(label: "chatfeed_engine_sessions", factory: factory)
        connections.record(0)
        subscriptions.record(0)
    }

    func connectionOpened() {
        connectionsOpened.increment()
        connections.record(open.add(1, ordering: .relaxed).newValue)
    }

    func connectionClosed(subscriptionsLeft: Int) {
        connections.record(open.subtract(1, ordering: .relaxed).newValue)
        if subscriptionsLeft > 0 { subscriptionsChanged(by: -subscriptionsLeft) }
    }

    func upgradeRefused(status: Int) {
        counter(in: refused, label: "chatfeed_gateway_upgrades_refused_total", ["status": "\(status)"]).increment()
    }

    func request(_ method: String) {
        counter(in: requests, label: "chatfeed_gateway_requests_total", ["method": method]).increment()
    }

    func error(_ method: String, code: Int) {
        counter(in: errors, label: "chatfeed_gateway_errors_total", ["method": method, "code": "\(code)"]).increment()
    }

    func groupCommitted(writes: Int, duration: Duration) {
        commitWrites.record(writes)
        commitTime.recordNanoseconds(Self.nanoseconds(duration))
        lastCommit.store(Self.nanoseconds(ContinuousClock.now - epoch), ordering: .relaxed)
    }

    /// A batch or reset frame was written to its socket.
    func notificationWritten() {
        let committed = lastCommit.load(ordering: .relaxed)
        guard committed >= 0 else { return }
        commitToSend.recordNanoseconds(max(0, Self.nanoseconds(ContinuousClock.now - epoch) - committed))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    func batchSent() { batches.increment() }
    func resetSent() { resets.increment() }

    func subscriptionsChanged(by delta: Int) {
        subscriptions.record(subscribed.add(delta, ordering: .relaxed).newValue)
    }

    private func counter(in cache: borrowing Mutex<[String: Metrics.Counter]>, label: String, _ dimensions: KeyValuePairs<String, String>) -> Metrics.Counter {
        let key = dimensions.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        return cache.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Metrics.Counter(label: label, dimensions: dimensions.map { ($0.key, $0.value) }, factory: factory)
            // Methods come from clients: a bounded set (unknown methods are counted as one).
            if counters.count < 1024 { counters[key] = counter }
            return counter
        }
    }

    /// Every metric in the Prometheus text format, with the engine's sessions open now (every
    /// kind: the gateway's connections, stdin, in-process clients).
    func text(openSessions: Int) -> [UInt8] {
        sessions.record(openSessions)
        return registry.emitToBuffer()
    }
}
