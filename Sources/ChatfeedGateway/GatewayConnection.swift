import ChatfeedEngine
import NIOCore
import NIOWebSocket
import Synchronization

/// One WebSocket as one engine session of its token's user: what the gateway's core keeps of it
/// while it is open (to end it in a shutdown), and what its channel handler
/// (`GatewayWebSocketHandler`) serves it with — the session's input, its output, its traffic.
///
/// No task serves a connection: its frames are read and written by the handler on the channel's
/// event loop; the engine hands the session's lines to that loop through `output`.
final class GatewayConnection: Sendable {
    let admission: Admission
    /// The session's requests in (`EngineSession.trySend`).
    let session: EngineSession
    /// The session's lines out, to the channel's event loop.
    let output: GatewayOutput
    /// The connection's requests and lines, for the metrics.
    let traffic: GatewayTraffic
    let channel: any Channel
    let opened: ContinuousClock.Instant
    /// Set by `shutDown()`: the session's end is the server's, so the close says it restarts.
    private let shuttingDown = Atomic<Bool>(false)
    /// Set by `cut()`.
    private let wasCutFlag = Atomic<Bool>(false)

    /// The close code of a connection the server ends (a shutdown, the engine stopping).
    static let restartCode = WebSocketErrorCode(codeNumber: 1012)

    /// Opens the engine session of `admission`'s user, whose lines go to `output`.
    init(engine: ChatEngine, admission: Admission, channel: any Channel, output: GatewayOutput, metrics: GatewayMetrics) {
        self.admission = admission
        self.output = output
        self.channel = channel
        traffic = GatewayTraffic(metrics: metrics)
        opened = .now
        session = engine.openSession(identity: Self.identity(of: admission.user), output: output)
    }

    /// The engine identity of a gateway session of `user`.
    static func identity(of user: String) -> SessionIdentity {
        .user(user)
    }

    /// Ends the session for a shutdown: the engine answers what it received, the lines are sent,
    /// then the WebSocket closes with 1012.
    func shutDown() {
        shuttingDown.store(true, ordering: .relaxed)
        session.close()
    }

    var isShuttingDown: Bool { shuttingDown.load(ordering: .relaxed) }

    /// Closes the connection's socket (after the shutdown grace): what it had not sent is dropped.
    func cut() {
        wasCutFlag.store(true, ordering: .relaxed)
        channel.close(promise: nil)
    }

    var wasCut: Bool { wasCutFlag.load(ordering: .relaxed) }
}
