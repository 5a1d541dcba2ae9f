import ArgumentParser
import ChatfeedConfig
import ChatfeedEngine
import ChatfeedGateway
import Foundation
import Logging
import ServiceLifecycle
import SQLite
import WireProtocol

/// `chatfeedd`: the live chat-list daemon. JSON-RPC 2.0 requests on stdin, one per line;
/// responses and `feed.batch` / `feed.reset` notifications on stdout; logs on stderr.
@main
struct ChatfeedDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chatfeedd",
        abstract: "Serve a chatfeed store over JSON-RPC lines on stdin/stdout.",
        discussion: "Ends gracefully (pending writes committed, responses flushed, status 0) at end of input, on SIGINT, SIGTERM or SIGHUP, or when stdout closes.",
        version: ChatfeedVersion.current)

    @Option(help: ArgumentHelp("The SQLite database file; created when missing.", valueName: "path"))
    var database: String?

    @Option(help: ArgumentHelp("The configuration file (default: $CHATFEED_CONFIG, else Config/chatfeed.json when present).", valueName: "file"))
    var config: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String?

    @Option(help: ArgumentHelp(
        "Also serve WebSocket sessions (one user each, by token) and HTTP on this address: the gateway. End of stdin then does not stop the daemon; SIGTERM and SIGINT do.",
        valueName: "host:port"))
    var listen: String?

    @Flag(name: .customLong("read-only"), help: "Open the database read-only: queries and the feed work, writes are refused (−32006).")
    var readOnly = false

    func run() async throws {
        let configuration: ChatfeedConfiguration
        var gatewayOptions: GatewayOptions?
        do {
            var loaded = try ChatfeedConfiguration.load(file: config)
            if let database { loaded.database = database }
            if let logLevel { try loaded.set("logLevel", text: logLevel) }
            configuration = loaded
            if let listen { gatewayOptions = try loaded.gatewayOptions(listen: listen) }
        } catch {
            fail("\(error)")
        }
        signal(SIGPIPE, SIG_IGN)
        // Before anything opens a database (Sources/SQLite/SQLiteLibrary.swift says why).
        let memoryStatisticsOff = SQLiteLibrary.disableMemoryStatistics()
        let level = configuration.loggerLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return SanitizingLogHandler(inner: handler)
        }
        let logger = Logger(label: "chatfeedd")
        logger.debug("SQLite's memory statistics are \(memoryStatisticsOff ? "off" : "on")")
        var options = configuration.engineOptions
        options.store.readOnly = readOnly
        let handoff = gatewayOptions.map { _ in EngineHandoff() }
        let daemon = ChatfeedDaemon(options: options, logger: logger, handoff: handoff)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: daemon, successTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let gatewayOptions, let handoff {
            let gateway = GatewayLauncher(handoff: handoff, options: gatewayOptions, logger: Logger(label: "chatfeed.gateway"))
            services.append(.init(service: gateway, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint, .sighup],
            logger: logger))
        do {
            try await group.run()
        } catch {
            fail("\(Self.rootCause(of: error))")
        }
        logger.info("stopped")
    }

    /// The daemon's own error inside the service group's wrapping.
    private static func rootCause(of error: any Error) -> any Error {
        if error is EngineStartError || error is GatewayError { return error }
        let mirror = Mirror(reflecting: error)
        for child in mirror.children {
            if let inner = child.value as? any Error { return rootCause(of: inner) }
        }
        return error
    }

    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("chatfeedd: error: \(message)\n".utf8))
        Foundation.exit(1)
    }
}

