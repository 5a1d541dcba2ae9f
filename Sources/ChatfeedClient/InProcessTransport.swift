import ChatfeedEngine
import Foundation
import Logging

/// The engine in-process (`InProcessEngine`): no child process, no pipes — what an iOS app uses.
/// Each `connect()` opens the database again in a new engine.
///
/// The engine logs through `logger` only: silent by default; give it the app's logger (at the
/// level the app wants) to see what it does.
public struct InProcessTransport: ChatfeedTransport {
    public var options: EngineOptions
    public var logger: Logger

    public init(options: EngineOptions, logger: Logger = .silent("chatfeed.engine")) {
        self.options = options
        self.logger = logger
    }

    /// The default options (the daemon's defaults) on `database` (created when missing).
    public init(database: String, logger: Logger = .silent("chatfeed.engine")) {
        self.init(options: EngineOptions(databasePath: database), logger: logger)
    }

    public func connect() async throws -> any ChatfeedConnection {
        do {
            return InProcessConnection(engine: try InProcessEngine(options: options, logger: logger))
        } catch {
            // The words chatfeedd prints when it cannot start: both transports fail alike.
            throw ChatfeedClientError.cannotStart("\(EngineStartError(database: options.databasePath, underlying: error))")
        }
    }
}

/// One running in-process engine.
public final class InProcessConnection: ChatfeedConnection {
    public let engine: InProcessEngine

    init(engine: InProcessEngine) { self.engine = engine }

    public var lines: AsyncStream<[UInt8]> { engine.lines }

    public var endReason: String? { engine.isStopped ? "the in-process engine stopped" : nil }

    public func send(_ line: [UInt8]) throws {
        guard engine.send(line) else { throw ChatfeedClientError.connectionLost("the in-process engine stopped") }
    }

    /// Ends the engine's input and waits for it to stop (it commits and answers first).
    public func close() async {
        engine.close()
        while !engine.isStopped { try? await Task.sleep(for: .milliseconds(2)) }
    }
}
