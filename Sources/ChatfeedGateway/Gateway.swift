import ChatfeedEngine
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The WebSocket gateway (docs/PROTOCOL.md, The gateway; README, The gateway): serves the engine's
/// sessions to apps and browsers over WebSocket, one session per connection as its token's user,
/// with `GET /healthz`, `GET /metrics`, the web client's files at `/`, and `GET /dev/token` when
/// `devTokens` is on.
///
/// A `Service`: run it in a `ServiceGroup`. A graceful shutdown stops admitting connections,
/// ends every session (the engine answers what it received), sends the pending lines, closes each
/// WebSocket with 1012 (service restart) and stops listening. The engine is the caller's: it keeps
/// running, and the caller stops it afterwards (pending writes commit then).
public final class Gateway: Service, Sendable {
    public let options: GatewayOptions
    private let engine: ChatEngine
    private let logger: Logger
    private let taskExecutor: (any TaskExecutor)?
    private let bound = Mutex<Int?>(nil)
    private let boundWaiters = Mutex<[CheckedContinuation<Int, Never>]>([])

    /// A gateway in front of `engine`. The token checks of upgrades run in tasks of their own
    /// on `taskExecutor` (nil: the global concurrent executor, as every other task of the
    /// process); the rest runs on the server's event loops and in the task that runs the gateway.
    public init(
        engine: ChatEngine, options: GatewayOptions, logger: Logger = Logger(label: "chatfeed.gateway"),
        taskExecutor: (any TaskExecutor)? = nil
    ) {
        self.engine = engine
        self.options = options
        self.logger = logger
        self.taskExecutor = taskExecutor
    }

    /// The port the gateway listens on, once it does (the chosen one when `options.port` is 0).
    public func boundPort() async -> Int {
        await withCheckedContinuation { waiter in
            let port = bound.withLock { $0 }
            if let port { waiter.resume(returning: port) } else {
                boundWaiters.withLock { $0.append(waiter) }
                // It may have bound in between.
                if let port = bound.withLock({ $0 }) { resumeWaiters(port) }
            }
        }
    }

    private func resumeWaiters(_ port: Int) {
        let waiters = boundWaiters.withLock { waiters in
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    public func run() async throws {
        let metrics = GatewayMetrics()
        engine.observer = metrics
        let core = GatewayCore(
            engine: engine, options: options, tokens: await GatewayTokens(secret: options.tokenSecret),
            logger: logger, metrics: metrics, taskExecutor: taskExecutor)
        let router = GatewayRoutes(core: core).router()
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in GatewayChannel(responder: responder, core: core) },
            configuration: ApplicationConfiguration(
                address: .hostname(options.host, port: options.port), serverName: nil),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? options.port
                bound.withLock { $0 = port }
                resumeWaiters(port)
                logger.info("gateway listening", metadata: ["address": "\(options.host):\(port)"])
            },
            logger: logger)
        if let webRoot = options.webRoot, !FileManager.default.fileExists(atPath: webRoot) {
            logger.notice("no web client: the webRoot directory does not exist (GET / answers 404)", metadata: ["webRoot": "\(webRoot)"])
        }
        // Shut down in reverse order: the drain (1012 to every WebSocket) before the server stops.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [
                .init(service: app),
                .init(service: Drain(core: core)),
            ],
            logger: logger))
        try await group.run()
    }
}

/// Waits for the graceful shutdown, then drains the gateway's connections.
private struct Drain: Service {
    let core: GatewayCore

    func run() async throws {
        try? await gracefulShutdown()
        await core.drain()
    }
}
