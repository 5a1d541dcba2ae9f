import ChatfeedClient
import Foundation

/// `chatfeed watch --demo --listen HOST:PORT`: the demo's `chatfeedd` also serves the web client
/// and its WebSocket feed there, with dev tokens, and the users `ann` and `zoe` share chats with
/// `me`, so that browser windows signed in as two of them chat with each other while the terminal
/// and the pages animate. The demo's own traffic goes on as without `--listen`.
struct DemoGateway {
    /// The demo's users besides `me`: members, with `me`, of its shared chats.
    static let users = [("ann", "Ann"), ("zoe", "Zoe")]

    var address: String
    /// The daemon's arguments: the demo database, a configuration with dev tokens and a fresh
    /// secret, and `--listen`.
    var arguments: [String]

    /// The pages to open, one per user.
    var urls: [String] { (["me"] + Self.users.map(\.0)).map { "http://\(address)/?user=\($0)" } }

    /// The daemon for the demo database, serving the gateway too.
    func transport() throws -> ChildProcessTransport {
        guard let executable = ChildProcessTransport.locate() else { throw ChatfeedClientError.executableNotFound }
        return ChildProcessTransport(executable: executable, arguments: arguments)
    }

    /// Creates the users and their chats with `me` (a user or chat the demo made already is kept),
    /// then prints the pages to open on stderr.
    func start(_ client: ChatClient) async {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for (id, name) in Self.users { _ = try? await client.createUser(id, name: name) }
        _ = try? await client.createChat(
            "web-group", title: "me, " + Self.users.map(\.1).joined(separator: " & "), createdAt: now,
            members: ["me"] + Self.users.map(\.0))
        for (id, name) in Self.users {
            _ = try? await client.createChat("web-\(id)", title: "me & \(name)", createdAt: now, members: ["me", id])
        }
        FileHandle.standardError.write(Data("chatfeed: the demo's web client, one window per user: \(urls.joined(separator: " "))\n".utf8))
    }

    /// Writes the gateway's secret and configuration into the demo's `directory`.
    ///
    /// - Throws: `CLIFailure` when the web client's files (`Web/`) cannot be found.
    init(address: String, database: String, directory: URL) throws {
        guard let web = Self.webRoot() else {
            throw CLIFailure(message: "no web client to serve: run from the chatfeed repository (its Web/ directory)")
        }
        let secret = directory.appendingPathComponent("token.secret")
        let bytes = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try bytes.write(to: secret, atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("chatfeed.json")
        let settings: [String: Any] = ["devTokens": true, "tokenSecretFile": secret.path, "webRoot": web.path]
        try JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys]).write(to: config)
        self.address = address
        self.arguments = ["--database", database, "--config", config.path, "--log-level", "error", "--listen", address]
    }

    /// `Web/` in the current directory, else in the repository that built this executable
    /// (`.build/<configuration>/chatfeed`).
    static func webRoot() -> URL? {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Web"),
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Web"),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("index.html").path) }
    }
}
