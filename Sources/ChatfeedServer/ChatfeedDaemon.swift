import ChatStore
import Foundation
import Logging
import SQLite
import ServiceLifecycle

/// The daemon as a service: JSON-RPC requests on an input stream, responses and feed
/// notifications on an output stream (SPEC §5). Run it in a `ServiceGroup` with
/// `successTerminationBehavior: .gracefullyShutdownGroup`: it returns at end of input or when
/// its output closes, and a graceful shutdown (SIGINT, SIGTERM) makes it commit what it has read,
/// flush and return.
public final class ChatfeedDaemon: Service, Sendable {
    private let options: ServerOptions
    private let logger: Logger
    private let input: Int32
    private let output: Int32
    private let queue = InputQueue()
    private let shutdown = ShutdownRequest()

    /// A daemon over the database of `options`. The database is opened (created when missing)
    /// and loaded when the service runs, so that a SIGINT or SIGTERM during a long load already
    /// ends it gracefully; a database that cannot be opened makes `run()` throw.
    public init(options: ServerOptions, logger: Logger, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.options = options
        self.logger = logger
        self.input = input
        self.output = output
    }

    public func run() async throws {
        let (queue, shutdown) = (self.queue, self.shutdown)
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
                    let thread = Thread { [self] in
                        do {
                            let writer = OutputWriter(fileDescriptor: self.output)
                            writer.shutdownRequestedAt = { shutdown.requestedAt }
                            let engine = try Engine(
                                options: options, logger: logger, input: input, output: writer,
                                queue: queue, shutdown: shutdown)
                            engine.run()
                            if let lost = engine.lostDatabase { finished.resume(throwing: lost) } else { finished.resume() }
                        } catch {
                            finished.resume(throwing: DaemonStartError(database: options.databasePath, underlying: error))
                        }
                    }
                    thread.name = "chatfeedd.engine"
                    thread.stackSize = 8 << 20
                    thread.start()
                }
            } onGracefulShutdown: {
                shutdown.request()
                queue.wake()
            }
        } onCancel: {
            shutdown.request()
            queue.wake()
        }
    }
}

/// The database could not be opened or loaded.
public struct DaemonStartError: Error, CustomStringConvertible {
    public var database: String
    public var underlying: any Error

    public init(database: String, underlying: any Error) {
        self.database = database
        self.underlying = underlying
    }

    public var description: String {
        // The store's own errors already name the database.
        switch underlying {
        case is ChatStoreError: "\(underlying)"
        case let error as SQLiteError: "cannot open the database '\(database)': \(error.summary)"
        default: "cannot open the database '\(database)': \(underlying)"
        }
    }
}
