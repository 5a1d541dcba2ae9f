import ChatfeedEngine
import Foundation
import Logging

/// The engine in-process (`InProcessEngine`): no child process, no pipes — what an iOS app uses.
/// Each `connect()` opens the database again in a new engine, or, with `init(engine:)`, a new
/// session on one shared engine (several clients of one app — an app and its extension).
///
/// The engine logs through `logger` only: silent by default; give it the app's logger (at the
/// level the app wants) to see what it does.
public struct InProcessTransport: ChatfeedTransport {
    public var options: EngineOptions
    public var logger: Logger
    /// The engine every connection opens a session on; nil: each connection opens its own engine.
    public var sharedEngine: ChatEngine?

    /// Each connection is a session on `engine` (which the caller stops).
    public init(engine: ChatEngine) {
        self.init(options: engine.options)
        sharedEngine = engine
    }

    public init(options: EngineOptions, logger: Logger = .silent("chatfeed.engine")) {
        self.options = options
        self.logger = logger
    }

    /// The default options (the daemon's defaults) on `database` (created when missing).
    public init(database: String, logger: Logger = .silent("chatfeed.engine")) {
        self.init(options: EngineOptions(databasePath: database), logger: logger)
    }

    public func connect() async throws -> any ChatfeedConnection {
        if let sharedEngine {
            guard !sharedEngine.isStopped else { throw ChatfeedClientError.cannotStart("the shared engine has stopped") }
            return InProcessSessionConnection(session: sharedEngine.openInProcessSession())
        }
        do {
            return InProcessConnection(engine: try InProcessEngine(options: options, logger: logger))
        } catch {
            // The words chatfeedd prints when it cannot start: both transports fail alike.
            throw ChatfeedClientError.cannotStart("\(EngineStartError(database: options.databasePath, underlying: error))")
        }
    }
}

/// One running in-process engine. Lines are handed to it in order off the caller's thread
/// (`send` never waits for the engine).
public final class InProcessConnection: ChatfeedConnection {
    public let engine: InProcessEngine
    private let sender: InProcessSender

    init(engine: InProcessEngine) {
        self.engine = engine
        sender = InProcessSender { [engine] in engine.send($0) }
    }

    public var lines: AsyncStream<[UInt8]> { engine.lines }

    public var endReason: String? { engine.isStopped ? "the in-process engine stopped" : nil }

    public func send(_ line: [UInt8]) throws {
        guard !engine.isStopped, sender.send(line) else {
            throw ChatfeedClientError.connectionLost("the in-process engine stopped")
        }
    }

    /// Ends the engine's input (after the lines sent before) and waits for it to stop (it commits
    /// and answers first). A cancelled task stops waiting (a cancelled sleep returns at once: the
    /// wait would spin).
    public func close() async {
        sender.close { [engine] in engine.close() }
        while !engine.isStopped, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
}

/// One session on a shared in-process engine. Lines are handed to it in order off the caller's
/// thread (`send` never waits for the engine).
public final class InProcessSessionConnection: ChatfeedConnection {
    public let session: InProcessSession
    private let sender: InProcessSender

    init(session: InProcessSession) {
        self.session = session
        sender = InProcessSender { [session] in session.send($0) }
    }

    public var lines: AsyncStream<[UInt8]> { session.lines }

    public var endReason: String? { session.isEnded ? "the in-process session ended (its engine stopped)" : nil }

    public func send(_ line: [UInt8]) throws {
        guard !session.isEnded, sender.send(line) else {
            throw ChatfeedClientError.connectionLost("the in-process session ended")
        }
    }

    /// Ends the session (after the lines sent before) and waits until the engine has answered
    /// what it was sent; a cancelled task stops waiting.
    public func close() async {
        sender.close { [session] in session.close() }
        while !session.isEnded, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
}
