import Foundation
import Logging
import ServiceLifecycle

/// The daemon as a service: JSON-RPC requests on an input stream, responses and feed
/// notifications on an output stream (SPEC §5). Run it in a `ServiceGroup` with
/// `successTerminationBehavior: .gracefullyShutdownGroup`: it returns at end of input or when
/// its output closes, and a graceful shutdown (SIGINT, SIGTERM) makes it commit what is pending,
/// flush and return.
public final class ChatfeedDaemon: Service, @unchecked Sendable {
    private let engine: Engine

    /// Opens (or creates) the database and loads the chat list, so that a bad database is an
    /// error before anything runs.
    public init(options: ServerOptions, logger: Logger, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) throws {
        engine = try Engine(options: options, logger: logger, input: input, output: output)
    }

    public func run() async {
        let engine = self.engine
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    let thread = Thread {
                        engine.run()
                        finished.resume()
                    }
                    thread.name = "chatfeedd.engine"
                    thread.stackSize = 8 << 20
                    thread.start()
                }
            } onGracefulShutdown: {
                engine.requestShutdown()
            }
        } onCancel: {
            engine.requestShutdown()
        }
    }
}
