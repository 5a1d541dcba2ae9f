import JSONCodec

/// The release of chatfeed: what `chatfeed --version`, `chatfeedd --version` and `server.version`
/// say, and the newest entry of CHANGELOG.md.
public enum ChatfeedVersion {
    public static let current = "0.2.0"
    /// The version of the wire protocol (docs/PROTOCOL.md): raised when a change could break a
    /// client (a method or member removed or changed in meaning); adding methods or members does
    /// not raise it, since clients ignore members they do not know.
    public static let wireProtocol = 1
}

/// The result of `server.version`: `{"version","protocol"}`.
public struct ServerVersion: Hashable, Sendable {
    /// The release, e.g. `"0.2.0"`.
    public var version: String
    /// The protocol's version (`ChatfeedVersion.wireProtocol` of the server).
    public var protocolVersion: Int

    public init(version: String = ChatfeedVersion.current, protocolVersion: Int = ChatfeedVersion.wireProtocol) {
        self.version = version
        self.protocolVersion = protocolVersion
    }

    public var jsonValue: JSONValue {
        ["version": .string(version), "protocol": .integer(protocolVersion)]
    }

    /// Decodes the result; members it does not know are ignored.
    public init(jsonValue: JSONValue) throws(WireDecodingError) {
        do {
            let reader = try ParamsReader(result: jsonValue, field: "")
            self.init(version: try reader.string("version"), protocolVersion: try reader.int("protocol", in: 0...Int.max))
        } catch {
            throw WireDecodingError(error)
        }
    }
}
