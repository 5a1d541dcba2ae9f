import ChatModel
import ChatStore
import ChatfeedEngine
import ChatfeedGateway
import Foundation
import HummingbirdWSClient
import JSONCodec
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// A gateway on loopback (port 0) over an engine on a temporary database, run in a service group
/// as chatfeedd runs it.
final class GatewayHarness: @unchecked Sendable {
    static let secret = Array("a test secret that is long enough".utf8)
    let directory: TemporaryDirectory
    let engine: ChatEngine
    private(set) var gateway: Gateway
    private(set) var group: ServiceGroup
    private(set) var running: Task<Void, any Error>
    private(set) var port: Int
    let tokens: GatewayTokens
    let logger: Logger

    /// Starts a gateway; `users` are created first (`me` always exists).
    init(
        users: [String] = [], sessionOutputLimitBytes: Int = EngineOptions.defaultSessionOutputLimitBytes,
        maxLineBytes: Int = EngineOptions.defaultMaxLineBytes, configure: (inout GatewayOptions) -> Void = { _ in }
    ) async throws {
        directory = try TemporaryDirectory()
        let path = directory.path("gateway.sqlite")
        do {
            let store = try ChatDatabase(path: path)
            for user in users { _ = try store.apply(.createUser(id: user, name: user, createdAt: 1)) }
        }
        engine = try ChatEngine(options: EngineOptions(
            databasePath: path, store: StoreOptions(durability: .normal), maxLineBytes: maxLineBytes,
            sessionOutputLimitBytes: sessionOutputLimitBytes))
        var options = GatewayOptions(host: "127.0.0.1", port: 0, tokenSecret: Self.secret, webRoot: nil)
        options.shutdownGraceSeconds = 3
        configure(&options)
        var logger = Logger(label: "gateway.test")
        logger.logLevel = .warning
        self.logger = logger
        (gateway, group, running, port) = await Self.start(engine: engine, options: options, logger: logger)
        tokens = await GatewayTokens(secret: Self.secret)
    }

    private static func start(engine: ChatEngine, options: GatewayOptions, logger: Logger) async
        -> (Gateway, ServiceGroup, Task<Void, any Error>, Int)
    {
        let gateway = Gateway(engine: engine, options: options, logger: logger, taskExecutor: DedicatedExecutor.shared)
        let group = ServiceGroup(configuration: .init(services: [gateway], logger: logger))
        // The server's tasks, and its token checks, on threads of their own: a whole test run
        // keeps the pool busy.
        let running = Task(executorPreference: DedicatedExecutor.shared) { try await group.run() }
        return (gateway, group, running, await gateway.boundPort())
    }

    /// Shuts the gateway down gracefully (1012 to every WebSocket) and starts another on the same
    /// engine and port.
    func restartGateway() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        var options = gateway.options
        options.port = port
        (gateway, group, running, port) = await Self.start(engine: engine, options: options, logger: logger)
    }

    /// Shuts the gateway down gracefully and stops the engine.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        engine.stop()
        await offPool { [engine] in engine.waitUntilStopped() }
    }

    func token(_ user: String, ttl: TimeInterval = 3600) async throws -> String {
        try await tokens.mint(user: user, expiresAt: Date().addingTimeInterval(ttl))
    }

    var url: String { "ws://127.0.0.1:\(port)/v1/feed" }

    /// A WebSocket of `user` (with a token in the Authorization header).
    func connect(_ user: String) async throws -> TestSocket {
        try await TestSocket.connect(url: url, token: try await token(user), logger: logger)
    }

    /// A trusted in-process session on the same engine (the backend's own writes).
    func trusted() -> InProcessSession { engine.openInProcessSession() }
}

/// A test's WebSocket client: text messages in arrival order, requests by method, and a reader
/// that can stop reading (then the client stops reading its socket).
final class TestSocket: @unchecked Sendable {
    private let inbox: Inbox
    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let reading = Mutex(true)
    private let closed: Task<WebSocketCloseFrame?, any Error>
    private var nextID = 1
    private(set) var notifications: [JSONValue] = []

    enum Outgoing: Sendable {
        case text(String)
        case binary([UInt8])
        /// Frames as they are (fragments, control frames), masked by the client.
        case frames([WebSocketFrame])
    }

    private init(inbox: Inbox, outgoing: AsyncStream<Outgoing>.Continuation, closed: Task<WebSocketCloseFrame?, any Error>) {
        self.inbox = inbox
        self.outgoing = outgoing
        self.closed = closed
    }

    static func connect(url: String, token: String?, logger: Logger) async throws -> TestSocket {
        let inbox = Inbox()
        let (outgoingStream, outgoing) = AsyncStream.makeStream(of: Outgoing.self)
        let opened = AsyncStream.makeStream(of: Void.self)
        let gate = Gate()
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 24)
        if let token { configuration.additionalHeaders[.authorization] = "Bearer \(token)" }
        configuration.autoPing = .disabled
        let closed = Task(executorPreference: DedicatedExecutor.shared) {
            defer { inbox.finish(); opened.continuation.finish() }
            return try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
                opened.continuation.yield()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await message in outgoingStream {
                            switch message {
                            case .text(let text): try await outbound.write(.text(text))
                            case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                            case .frames(let frames): for frame in frames { try await outbound.write(.custom(frame)) }
                            }
                        }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 26) {
                        if case .text(let text) = message { inbox.append(text) }
                        await gate.waitUntilOpen()
                    }
                    group.cancelAll()
                }
            }
        }
        var openedIterator = opened.stream.makeAsyncIterator()
        _ = await openedIterator.next()
        let socket = TestSocket(inbox: inbox, outgoing: outgoing, closed: closed)
        socket.gate = gate
        return socket
    }

    private var gate: Gate?

    /// Stops reading the socket after the message being read (TCP pushes back on the server).
    func stopReading() { gate?.close() }
    func resumeReading() { gate?.open() }

    func send(_ text: String) { outgoing.yield(.text(text)) }
    func sendBinary(_ bytes: [UInt8]) { outgoing.yield(.binary(bytes)) }
    /// Sends `frames` as they are, in order.
    func sendFrames(_ frames: [WebSocketFrame]) { outgoing.yield(.frames(frames)) }
    func finishSending() { outgoing.finish() }

    static func request(id: Int, _ method: String, _ params: JSONObject = [:]) -> String {
        String(decoding: JSONValue.object(["jsonrpc": "2.0", "id": .integer(id), "method": .string(method), "params": .object(params)]).serialized(), as: UTF8.self)
    }

    /// Sends a request and returns its response (`result` or `error` inside).
    func call(_ method: String, _ params: JSONObject = [:]) async throws -> JSONValue {
        let id = nextID
        nextID += 1
        send(Self.request(id: id, method, params))
        return try await response(to: id)
    }

    func result(_ method: String, _ params: JSONObject = [:]) async throws -> JSONValue {
        let response = try await call(method, params)
        return try #require(response["result"], "\(method) failed: \(response)")
    }

    func response(to id: Int) async throws -> JSONValue {
        while let message = try await next() {
            if message["id"] == .integer(id) { return message }
            notifications.append(message)
        }
        throw Closed()
    }

    /// The next message, nil once the connection closed; fails after 60 seconds (a wait for the
    /// cooperative pool in a whole test run can take seconds).
    func next() async throws -> JSONValue? {
        guard let text = try await inbox.next(timeout: .seconds(60)) else { return nil }
        return try JSONValue(parsing: Array(text.utf8))
    }

    func keep(_ notification: JSONValue) { notifications.append(notification) }

    func nextNotification() async throws -> JSONValue {
        let message = try #require(try await next())
        notifications.append(message)
        return message
    }

    /// The close frame the server sent (nil: none), once the connection ended.
    func closeFrame() async throws -> WebSocketCloseFrame? {
        try await closed.value
    }

    struct Closed: Error {}
}

struct TimedOut: Error {}

/// Open or closed; waiters pass once it is open.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((true, []))
    func close() { state.withLock { $0.open = false } }
    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    func waitUntilOpen() async {
        await withCheckedContinuation { waiter in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(waiter) }
                return state.open
            }
            if open { waiter.resume() }
        }
    }
}

/// Messages in arrival order, read one at a time with a time limit.
final class Inbox: Sendable {
    private struct State {
        var messages: [String] = []
        var finished = false
        var waiter: CheckedContinuation<String?, any Error>?
    }
    private let state = Mutex(State())

    func append(_ message: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String?, any Error>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.messages.append(message)
            return nil
        }
        waiter?.resume(returning: message)
    }

    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next message, nil once finished; throws `TimedOut` after `timeout`, measured on a
    /// Dispatch queue (not by a task, which would wait for the cooperative pool to fire).
    func next(timeout: Duration) async throws -> String? {
        let timer = DispatchWorkItem { [weak self] in
            let waiter = self?.state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: TimedOut())
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: timer)
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { waiter in
            let now: String?? = state.withLock { state in
                if !state.messages.isEmpty { return .some(state.messages.removeFirst()) }
                if state.finished { return .some(nil) }
                state.waiter = waiter
                return nil
            }
            if let now { waiter.resume(returning: now) }
        }
    }
}
