import ChatStore
import ChatfeedEngine
import Foundation
import Logging
import NamedThreads
import ServiceLifecycle
import Synchronization

/// The daemon as a service: one engine session over an input and an output stream (stdin and
/// stdout: JSON-RPC requests in, responses and feed notifications out, docs/PROTOCOL.md). Run it in a
/// `ServiceGroup` with `successTerminationBehavior: .gracefullyShutdownGroup`: it returns at end
/// of input or when its output closes, and a graceful shutdown (SIGINT, SIGTERM) makes it commit
/// what it has read, flush and return.
final class ChatfeedDaemon: Service, Sendable {
    private let options: EngineOptions
    private let logger: Logger
    private let input: Int32
    private let output: Int32
    /// The running engine, once loaded; `stopRequested` when a shutdown came first.
    private let state = DaemonState()
    /// Gets the engine once it is loaded (the gateway); nil when the daemon serves stdin alone.
    private let handoff: EngineHandoff?

    /// A daemon over the database of `options`. The database is opened (created when missing)
    /// and loaded when the service runs, so that a SIGINT or SIGTERM during a long load already
    /// ends it gracefully; a database that cannot be opened makes `run()` throw.
    /// With a `handoff` (`--listen`), the engine goes to it once loaded, and the end of stdin
    /// does not stop the daemon: only a shutdown does.
    init(
        options: EngineOptions, logger: Logger, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO,
        handoff: EngineHandoff? = nil
    ) {
        self.options = options
        self.logger = logger
        self.input = input
        self.output = output
        self.handoff = handoff
    }

    func run() async throws {
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
                    Thread.start(named: "chatfeedd.main") { [self] in
                        let engine: ChatEngine
                        do {
                            engine = try ChatEngine(options: options, logger: logger)
                        } catch {
                            self.handoff?.finish()
                            finished.resume(throwing: EngineStartError(database: options.databasePath, underlying: error))
                            return
                        }
                        let writer = OutputWriter(fileDescriptor: self.output)
                        let state = self.state
                        writer.shutdownRequestedAt = { state.value.withLock { $0.stopRequested } }
                        // Written on its own thread: a stalled stdout holds this session only.
                        let output = ThreadedOutput(writer, limitBytes: options.sessionOutputLimitBytes)
                        let logger = self.logger
                        // The daemon lives as long as its stdin/stdout session, or, listening,
                        // until a shutdown.
                        let listening = self.handoff != nil
                        let session = engine.openSession(output: output, onEnd: {
                            if listening {
                                logger.info("end of input or stdout closed: the gateway goes on")
                            } else {
                                logger.info("end of input or stdout closed: shutting down")
                                engine.stop()
                            }
                        })
                        self.handoff?.set(engine)
                        let stopFirst = state.value.withLock { state in
                            state.engine = engine
                            return state.stopRequested != nil
                        }
                        if stopFirst { engine.stop() }
                        InputReader.start(fileDescriptor: self.input, into: session)
                        engine.waitUntilStopped()
                        output.waitUntilWritten()
                        self.handoff?.finish()
                        if let lost = engine.lostDatabase { finished.resume(throwing: lost) } else { finished.resume() }
                    }
                }
            } onGracefulShutdown: { [self] in
                requestStop()
            }
        } onCancel: { [self] in
            requestStop()
        }
    }

    private func requestStop() {
        let engine = state.value.withLock { state -> ChatEngine? in
            if state.stopRequested == nil { state.stopRequested = Date() }
            return state.engine
        }
        engine?.stop()
    }
}

/// The running engine, once loaded, and when a shutdown was requested (perhaps before it loaded).
private final class DaemonState: Sendable {
    let value = Mutex<(engine: ChatEngine?, stopRequested: Date?)>((nil, nil))
}
