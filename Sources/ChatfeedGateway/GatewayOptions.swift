import Foundation
import NIOCore

/// Everything a gateway needs to run (docs/PROTOCOL.md, The gateway; README, The gateway). The
/// daemon fills it from the configuration (`ChatfeedConfiguration.gatewayOptions`); an embedder
/// builds it in code and gets the same defaults (the configuration table reads them from here).
public struct GatewayOptions: Sendable {
    /// The address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`).
    public var host: String
    /// The TCP port; 0 picks a free one (`Gateway.boundPort` tells which).
    public var port: Int
    /// The HS256 secret tokens are signed with.
    public var tokenSecret: [UInt8]
    /// A ping every this many seconds (fractions allowed); a ping not answered (by a pong or any
    /// other frame) within twice this closes the connection (1001).
    public var pingIntervalSeconds: Double
    /// The most WebSocket connections at once; one more is HTTP 503.
    public var maxConnections: Int
    /// Serve `GET /dev/token?user=U` (development only).
    public var devTokens: Bool
    /// The directory served at `/` (the web client); nil or missing: 404s.
    public var webRoot: String?
    /// The longest a shutdown waits for a connection to take its last lines before it is cut.
    public var shutdownGraceSeconds: Double

    public static let defaultPingIntervalSeconds = 30.0
    public static let defaultMaxConnections = 10_000
    public static let defaultDevTokens = false
    public static let defaultWebRoot = "Web"
    public static let defaultTokenSecretFile = "chatfeed-token.secret"
    public static let defaultShutdownGraceSeconds = 10.0

    public init(
        host: String = "127.0.0.1", port: Int, tokenSecret: [UInt8],
        pingIntervalSeconds: Double = defaultPingIntervalSeconds, maxConnections: Int = defaultMaxConnections,
        devTokens: Bool = defaultDevTokens, webRoot: String? = defaultWebRoot,
        shutdownGraceSeconds: Double = defaultShutdownGraceSeconds
    ) {
        self.host = host
        self.port = port
        self.tokenSecret = tokenSecret
        self.pingIntervalSeconds = pingIntervalSeconds
        self.maxConnections = maxConnections
        self.devTokens = devTokens
        self.webRoot = webRoot
        self.shutdownGraceSeconds = shutdownGraceSeconds
    }

    /// `pingIntervalSeconds` as a time amount (at least a millisecond).
    var pingInterval: TimeAmount {
        .nanoseconds(max(1_000_000, Int64((pingIntervalSeconds * 1e9).rounded())))
    }

    /// `HOST:PORT` (`[::1]:8080` for IPv6) as host and port.
    /// - Throws: `GatewayError.badListenAddress` naming what is wrong.
    public static func parseListenAddress(_ text: String) throws(GatewayError) -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw .badListenAddress("'\(text)' is not HOST:PORT (e.g. 127.0.0.1:8080)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw .badListenAddress("'\(text)' is not HOST:PORT with a port from 0 to 65535 (e.g. 127.0.0.1:8080)")
        }
        return (host, port)
    }

    /// The secret in `file`, surrounding whitespace trimmed.
    /// - Throws: `GatewayError.noSecret` when the file cannot be read or holds fewer than
    ///   `minimumSecretBytes` bytes.
    public static func readSecret(file: String) throws(GatewayError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw .noSecret("cannot read the token secret file '\(file)' (tokenSecretFile): a gateway needs a secret to verify tokens")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw .noSecret("the token secret file '\(file)' (tokenSecretFile) is empty: a gateway needs a secret to verify tokens")
        }
        guard text.utf8.count >= minimumSecretBytes else {
            throw .noSecret("the token secret in '\(file)' (tokenSecretFile) is \(text.utf8.count) bytes: HS256 needs at least \(minimumSecretBytes) (e.g. `openssl rand -hex 32 > \(file)`)")
        }
        return Array(text.utf8)
    }

    /// The shortest secret accepted: HS256's output size.
    public static let minimumSecretBytes = 32
}

/// Why a gateway cannot start.
public enum GatewayError: Error, CustomStringConvertible, Sendable {
    case badListenAddress(String)
    case noSecret(String)

    public var description: String {
        switch self {
        case .badListenAddress(let message), .noSecret(let message): message
        }
    }
}
