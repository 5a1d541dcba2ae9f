/// Why a configuration could not be loaded: one line naming the file and the key.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// An explicit file (`--config`, `$CHATFEED_CONFIG`) that does not exist.
        case fileNotFound
        /// The file exists but cannot be read.
        case unreadable
        /// Not JSON; `line` and `column` count from 1.
        case malformedJSON(line: Int, column: Int)
        /// Valid JSON that is not an object.
        case notAnObject
        case unknownKey
        case duplicateKey
        case wrongType
        case outOfRange
    }

    public var kind: Kind
    /// The file, or another source such as "command line"; nil for built-in values.
    public var source: String?
    /// The configuration key concerned, if any.
    public var key: String?
    /// What is wrong and what would be right.
    public var message: String

    public init(_ kind: Kind, source: String?, key: String? = nil, message: String) {
        self.kind = kind
        self.source = source
        self.key = key
        self.message = message
    }

    public var description: String {
        var text = "configuration error"
        if let source { text += " in \(source)" }
        if case .malformedJSON(let line, let column) = kind { text += " at line \(line), column \(column)" }
        if let key { text += ": '\(key)'" }
        return text + ": " + message
    }
}
