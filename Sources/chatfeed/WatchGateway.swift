import ArgumentParser
import ChatfeedClient

/// `chatfeed watch --url ws://…/v1/feed --token T`: watches a gateway (`chatfeedd --listen`)
/// instead of starting chatfeedd on a database.
struct WatchGateway: ParsableArguments {
    @Option(help: ArgumentHelp("Watch a gateway: its WebSocket URL, e.g. ws://127.0.0.1:8080/v1/feed (with --token).", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("The gateway token (chatfeed token --user U).", valueName: "token"))
    var token: String?

    func validate(demo: Bool) throws {
        if url != nil, token == nil { throw ValidationError("--url needs --token (mint one with 'chatfeed token --user U')") }
        if token != nil, url == nil { throw ValidationError("--token goes with --url") }
        if url != nil, demo { throw ValidationError("--demo makes its own database: leave out --url") }
        if let url, !(url.hasPrefix("ws://") || url.hasPrefix("wss://")) {
            throw ValidationError("--url must be a ws:// or wss:// URL, such as ws://127.0.0.1:8080/v1/feed")
        }
    }

    /// The WebSocket transport when --url is given.
    func transport() -> (any ChatfeedTransport)? {
        guard let url, let token else { return nil }
        return WebSocketTransport(url: url, token: token)
    }
}
