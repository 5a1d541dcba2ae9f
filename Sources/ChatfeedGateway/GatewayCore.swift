import ChatfeedEngine
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A WebSocket the gateway let in: its user, its slot among `maxConnections`.
struct Admission: Sendable {
    var user: String
    var address: String
    /// Given back once, when its socket closes.
    let slot: AdmissionSlot
}

/// A connection slot `GatewayCore.admit` took. `release()` gives it back the first time only, so
/// that both the close of a served WebSocket and the end of an upgrade that failed after its admission (the
/// client gone before the 101 was written) may call it: a slot never leaks, and is never given
/// back twice.
final class AdmissionSlot: Sendable {
    private let released = Atomic<Bool>(false)
    private let giveBack: @Sendable () -> Void

    init(giveBack: @escaping @Sendable () -> Void) { self.giveBack = giveBack }

    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { giveBack() }
    }
}

/// What the gateway's connections share: the engine, the token check, the open connections and
/// the shutdown state.
final class GatewayCore: Sendable {
    let engine: ChatEngine
    let options: GatewayOptions
    let tokens: GatewayTokens
    let logger: Logger
    let metrics: GatewayMetrics
    /// Where the admissions' tasks run (nil: the global concurrent executor).
    let taskExecutor: (any TaskExecutor)?
    /// The largest text message a client may send: the engine's line limit.
    var maxFrameBytes: Int { engine.options.maxLineBytes }

    private struct State {
        var connections = 0
        var draining = false
        var open: [Int: GatewayConnection] = [:]
        var nextID = 1
    }
    private let state = Mutex(State())

    init(
        engine: ChatEngine, options: GatewayOptions, tokens: GatewayTokens, logger: Logger, metrics: GatewayMetrics,
        taskExecutor: (any TaskExecutor)?
    ) {
        self.engine = engine
        self.options = options
        self.tokens = tokens
        self.logger = logger
        self.metrics = metrics
        self.taskExecutor = taskExecutor
    }

    var connectionCount: Int { state.withLock { $0.connections } }

    // MARK: Admission

    /// Decides an upgrade of `uri`: the path, the shutdown state, `maxConnections`, the token and
    /// its user. A success holds a connection slot until its socket closes.
    func admit(uri: String, headers: HTTPHeaders, address: String) async -> Result<Admission, GatewayRefusal> {
        let (path, query) = Self.split(uri)
        guard path == "/v1/feed" else {
            return .failure(GatewayRefusal(status: .notFound, reason: "no WebSocket at \(path): connect to /v1/feed"))
        }
        let authorization = headers.first(name: "Authorization")
        let user: String
        switch await authenticate(authorization: authorization, query: query) {
        case .success(let found): user = found
        case .failure(let refusal):
            metrics.upgradeRefused(status: refusal.status.code)
            logger.info("connection refused", metadata: ["address": "\(address)", "status": "\(refusal.status.code)", "reason": "\(refusal.reason)"])
            return .failure(refusal)
        }
        let refusal: GatewayRefusal? = state.withLock { state in
            if state.draining { return GatewayRefusal(status: .serviceUnavailable, reason: "the server is shutting down: reconnect later") }
            guard state.connections < options.maxConnections else {
                return GatewayRefusal(status: .serviceUnavailable, reason: "too many connections (maxConnections \(options.maxConnections)): reconnect later")
            }
            state.connections += 1
            return nil
        }
        if let refusal {
            metrics.upgradeRefused(status: refusal.status.code)
            logger.info("connection refused", metadata: ["address": "\(address)", "user": "\(user)", "status": "503", "reason": "\(refusal.reason)"])
            return .failure(refusal)
        }
        return .success(Admission(user: user, address: address, slot: AdmissionSlot { [self] in
            state.withLock { $0.connections -= 1 }
        }))
    }

    /// The user of the request's token (`Authorization: Bearer …` or `access_token`), or why not.
    func authenticate(authorization: String?, query: String?) async -> Result<String, GatewayRefusal> {
        var token: String?
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                return .failure(.init(status: .unauthorized, reason: "malformed Authorization header: expected 'Bearer <token>'"))
            }
            token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        } else if let query {
            token = Self.queryValue("access_token", in: query)
        }
        guard let token, !token.isEmpty else {
            return .failure(.init(status: .unauthorized, reason: "missing token: send Authorization: Bearer <token> or ?access_token=<token>"))
        }
        let user: String
        do {
            user = try await tokens.verify(token)
        } catch {
            return .failure(.init(status: .unauthorized, reason: error.reason))
        }
        do {
            guard try await engine.user(user) != nil else {
                return .failure(.init(status: .unauthorized, reason: "token refused: its user '\(user)' does not exist"))
            }
        } catch {
            return .failure(.init(status: .serviceUnavailable, reason: "the server is shutting down: reconnect later"))
        }
        return .success(user)
    }

    // MARK: Sessions

    /// Registers an upgraded WebSocket of `admission` (on its event loop, from its handler) and
    /// opens its engine session; a connection registered while a drain runs is shut down at once.
    /// - Returns: the connection's id for `closed`, and the connection.
    func open(_ admission: Admission, channel: any Channel, output: GatewayOutput) -> (Int, GatewayConnection) {
        let connection = GatewayConnection(engine: engine, admission: admission, channel: channel, output: output, metrics: metrics)
        let (id, draining) = state.withLock { state -> (Int, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.open[id] = connection
            return (id, state.draining)
        }
        // Admitted before the drain began but registered after it took the open connections:
        // the drain did not see it, so it closes here, with 1012 like the others.
        if draining { connection.shutDown() }
        metrics.connectionOpened()
        logger.info("connection opened", metadata: ["user": "\(admission.user)", "address": "\(admission.address)"])
        return (id, connection)
    }

    /// The WebSocket `id` closed (its socket did): its slot is given back, and its log line says
    /// why.
    func closed(_ id: Int, _ connection: GatewayConnection, reason: String) {
        state.withLock { state in state.open[id] = nil }
        connection.admission.slot.release()
        metrics.connectionClosed(subscriptionsLeft: connection.traffic.openSubscriptions)
        let duration = ContinuousClock.now - connection.opened
        logger.info("connection closed", metadata: [
            "user": "\(connection.admission.user)", "address": "\(connection.admission.address)", "reason": "\(reason)",
            "duration": "\(duration.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 3))))",
        ])
    }

    /// Stops admitting connections, ends every session (the engine answers what it received and
    /// flushes), closes each WebSocket with 1012, and returns once all are closed or
    /// `shutdownGraceSeconds` passed.
    func drain() async {
        let open = state.withLock { state in
            state.draining = true
            return Array(state.open.values)
        }
        logger.info("shutting down: closing every WebSocket with 1012", metadata: ["connections": "\(open.count)"])
        for connection in open { connection.shutDown() }
        let deadline = ContinuousClock.now + .seconds(options.shutdownGraceSeconds)
        while connectionCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        // A connection whose client stopped reading never takes its last lines nor the close
        // frame, and would hold the server's stop until the heartbeat gives up on it: its socket
        // is closed (what it had not sent is dropped).
        let left = state.withLock { Array($0.open.values) }
        if !left.isEmpty {
            logger.warning("WebSockets still open after the shutdown grace: their sockets closed", metadata: ["sockets": "\(left.count)"])
            for connection in left { connection.cut() }
        }
        // Upgrades still under way when the drain began end too (refused or closed).
        let socketsDeadline = ContinuousClock.now + .seconds(1)
        while connectionCount > 0, ContinuousClock.now < socketsDeadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    var isDraining: Bool { state.withLock { $0.draining } }

    // MARK: URIs

    static func split(_ uri: String) -> (path: String, query: String?) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, nil) }
        return (String(uri[..<mark]), String(uri[uri.index(after: mark)...]))
    }

    /// The percent-decoded value of `name` in a query string.
    static func queryValue(_ name: String, in query: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}
