import Foundation
import Logging
import Synchronization
#if canImport(Darwin)
#else
import HummingbirdWSClient
#endif

/// A gateway (`chatfeedd --listen`) over WebSocket, with a token (docs/PROTOCOL.md, The gateway):
/// each JSON-RPC line is one text frame. `URLSessionWebSocketTask` on Apple platforms
/// (WebSocketConnection+URLSession.swift), hummingbird-websocket's `WebSocketClient` elsewhere.
/// A connection that ends (a restart of the gateway: close 1012) is reopened by the client,
/// which resubscribes with its `known` rows.
public struct WebSocketTransport: ChatfeedTransport {
    /// `ws://host:port/v1/feed` (or `wss://` behind a TLS-terminating proxy).
    public var url: String
    /// The gateway token (`chatfeed token`, or the team's sign-in service).
    public var token: String
    public var logger: Logger
    /// `.network` by default: a gateway that restarts is waited for about a minute, and the
    /// clients of a restarted gateway come back spread over a second.
    public var reconnectPolicy: ReconnectPolicy
    /// How long the gateway may take to answer the upgrade (10 s by default). A gateway that
    /// closes the connection without answering (one shutting down as the request arrives) is
    /// waited for this long, then the attempt fails and the next one is made.
    public var handshakeTimeout: Duration

    public init(
        url: String, token: String, reconnectPolicy: ReconnectPolicy = .network,
        handshakeTimeout: Duration = .seconds(10), logger: Logger = .silent("chatfeed.websocket")
    ) {
        self.url = url
        self.token = token
        self.reconnectPolicy = reconnectPolicy
        self.handshakeTimeout = handshakeTimeout
        self.logger = logger
    }

    /// Opens a WebSocket; throws `cannotStart` with the gateway's words when it refuses (a 401).
    public func connect() async throws -> any ChatfeedConnection {
        try await WebSocketConnection.open(url: url, token: token, handshakeTimeout: handshakeTimeout, logger: logger)
    }
}

/// One open WebSocket to a gateway.
public final class WebSocketConnection: ChatfeedConnection, Sendable {
    public let lines: AsyncStream<[UInt8]>
    private let linesIn: AsyncStream<[UInt8]>.Continuation
    private let outgoing: AsyncStream<[UInt8]>.Continuation
    let outgoingLines: AsyncStream<[UInt8]>
    private let state = Mutex<(open: Bool, endReason: String?)>((true, nil))
    private let finished = Mutex<[CheckedContinuation<Void, Never>]?>([])

    init() {
        (lines, linesIn) = AsyncStream.makeStream(of: [UInt8].self)
        (outgoingLines, outgoing) = AsyncStream.makeStream(of: [UInt8].self)
    }

    public var endReason: String? { state.withLock { $0.endReason } }

    public func send(_ line: [UInt8]) throws {
        guard state.withLock({ $0.open }) else {
            throw ChatfeedClientError.connectionLost(endReason ?? "the WebSocket closed")
        }
        outgoing.yield(line)
    }

    /// Closes the WebSocket after the lines sent before, and waits until it has closed.
    public func close() async {
        outgoing.finish()
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(waiter)
                return false
            }
            if done { waiter.resume() }
        }
    }

    func ended(_ reason: String) {
        state.withLock { state in
            state.open = false
            if state.endReason == nil { state.endReason = reason }
        }
        linesIn.finish()
        outgoing.finish()
        let waiters = finished.withLock { waiters in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// A text frame as a line, without its `\n`.
    func received(_ text: String) {
        linesIn.yield(Array(text.utf8))
    }

    /// The line to send as a text frame: without its `\n`.
    static func frameText(_ line: [UInt8]) -> String {
        String(decoding: line.last == 0x0A ? line.dropLast() : line[...], as: UTF8.self)
    }

    #if canImport(Darwin)
    static func open(url: String, token: String, handshakeTimeout: Duration, logger: Logger) async throws -> WebSocketConnection {
        guard let address = URL(string: url) else { throw ChatfeedClientError.cannotStart("'\(url)' is not a URL") }
        let channel = URLSessionTaskChannel(url: address, token: token, maximumMessageSize: 1 << 26)
        return try await open(channel: channel, url: url, handshakeTimeout: handshakeTimeout)
    }
    #else
    static func open(url: String, token: String, handshakeTimeout: Duration, logger: Logger) async throws -> WebSocketConnection {
        let connection = WebSocketConnection()
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 26)
        configuration.additionalHeaders[.authorization] = "Bearer \(token)"
        configuration.autoPing = .disabled  // the gateway pings; its pings are answered
        let settings = configuration
        let opened = OpenedSignal()
        let outgoingLines = connection.outgoingLines
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            opened.set(waiter)
            // The client of swift-websocket allows half-closed connections and waits for the
            // upgrade's answer past the server's FIN: without this bound, a gateway that closes
            // during the handshake leaves `connect()` waiting for good.
            let timer = Task {
                guard (try? await Task.sleep(for: handshakeTimeout)) != nil else { return }
                opened.take()?.resume(throwing: ChatfeedClientError.cannotStart(
                    "the gateway at \(url) did not answer the WebSocket upgrade within \(handshakeTimeout)"))
            }
            Task {
                defer { timer.cancel() }
                do {
                    let close = try await WebSocketClient.connect(url: url, configuration: settings, logger: logger) {
                        inbound, outbound, _ in
                        // Opened after the handshake timed out: nobody uses it, it closes.
                        guard let waiter = opened.take() else { return }
                        timer.cancel()
                        waiter.resume()
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                for await line in outgoingLines { try await outbound.write(.text(frameText(line))) }
                                // Closed by the client: the server answers what it has, then closes.
                                try await outbound.close(.normalClosure, reason: nil)
                            }
                            for try await message in inbound.messages(maxSize: 1 << 26) {
                                if case .text(let text) = message { connection.received(text) }
                            }
                            group.cancelAll()
                        }
                    }
                    let code = close.map { "\($0.closeCode)\($0.reason.map { ": \($0)" } ?? "")" } ?? "no close frame"
                    connection.ended("the gateway closed the WebSocket (\(code))")
                    opened.take()?.resume(throwing: ChatfeedClientError.cannotStart("the gateway at \(url) closed at once (\(code))"))
                } catch {
                    connection.ended("the WebSocket failed: \(error)")
                    opened.take()?.resume(throwing: ChatfeedClientError.cannotStart("cannot open \(url): \(error)"))
                }
            }
        }
        return connection
    }
    #endif
}

/// The waiter of `connect()` until the WebSocket opened or failed (resumed once).
final class OpenedSignal: Sendable {
    private let waiter = Mutex<CheckedContinuation<Void, any Error>?>(nil)
    func set(_ waiter: CheckedContinuation<Void, any Error>) { self.waiter.withLock { $0 = waiter } }
    func take() -> CheckedContinuation<Void, any Error>? { waiter.withLock { $0.take() } }
}
