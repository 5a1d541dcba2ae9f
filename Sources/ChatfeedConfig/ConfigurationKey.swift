import JSONCodec

/// One key of the configuration: its name, type, range, default and meaning, and how it reads
/// and writes its property. `ChatfeedConfiguration.table` lists them all.
public struct ConfigurationKey: @unchecked Sendable {
    /// The JSON type of a key's value and its allowed values.
    public enum Kind: Sendable, Hashable {
        case string
        case integer(ClosedRange<Int>)
        case number(minimum: Double)
        case boolean
        /// One of these strings.
        case choice([String])
    }

    public let name: String
    public let kind: Kind
    /// What the key means, in one line.
    public let summary: String
    private let read: (ChatfeedConfiguration) -> JSONValue
    private let write: (inout ChatfeedConfiguration, JSONValue) -> Void

    private init(
        _ name: String, _ kind: Kind, _ summary: String, read: @escaping (ChatfeedConfiguration) -> JSONValue,
        write: @escaping (inout ChatfeedConfiguration, JSONValue) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.summary = summary
        self.read = read
        self.write = write
    }

    static func string(_ name: String, _ path: WritableKeyPath<ChatfeedConfiguration, String>, _ summary: String) -> Self {
        Self(name, .string, summary, read: { .string($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.stringValue! })
    }

    static func integer(
        _ name: String, _ path: WritableKeyPath<ChatfeedConfiguration, Int>, _ range: ClosedRange<Int>, _ summary: String
    ) -> Self {
        Self(name, .integer(range), summary, read: { .integer($0[keyPath: path]) },
             write: { $0[keyPath: path] = Int($1.int64Value!) })
    }

    static func number(
        _ name: String, _ path: WritableKeyPath<ChatfeedConfiguration, Double>, minimum: Double, _ summary: String
    ) -> Self {
        Self(name, .number(minimum: minimum), summary, read: { JSONValue.double($0[keyPath: path]) ?? .null },
             write: { $0[keyPath: path] = $1.numberValue!.doubleValue })
    }

    static func boolean(_ name: String, _ path: WritableKeyPath<ChatfeedConfiguration, Bool>, _ summary: String) -> Self {
        Self(name, .boolean, summary, read: { .bool($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.boolValue! })
    }

    static func choice<T: RawRepresentable & CaseIterable>(
        _ name: String, _ path: WritableKeyPath<ChatfeedConfiguration, T>, _ summary: String
    ) -> Self where T.RawValue == String {
        Self(name, .choice(T.allCases.map(\.rawValue)), summary, read: { .string($0[keyPath: path].rawValue) },
             write: { $0[keyPath: path] = T(rawValue: $1.stringValue!)! })
    }

    /// The key's value in `configuration`.
    public func value(in configuration: ChatfeedConfiguration) -> JSONValue { read(configuration) }

    /// The built-in default.
    public var defaultValue: JSONValue { read(.defaults) }

    /// Checks `value` and sets it; `source` names the origin in errors.
    func set(_ value: JSONValue, in configuration: inout ChatfeedConfiguration, source: String) throws(ConfigError) {
        write(&configuration, try checked(value, source: source))
    }

    /// `value` when it has the key's type and is in its range (an integer written `2048.0` becomes 2048).
    func checked(_ value: JSONValue, source: String) throws(ConfigError) -> JSONValue {
        func wrongType(_ expected: String) -> ConfigError {
            ConfigError(.wrongType, source: source, key: name, message: "must be \(expected), not \(value.typeDescription)")
        }
        func outOfRange(_ message: String) -> ConfigError {
            ConfigError(.outOfRange, source: source, key: name, message: message)
        }
        switch kind {
        case .string:
            guard case .string(let text) = value else { throw wrongType(name == "database" ? "a file path (string)" : "a string") }
            guard !text.isEmpty else { throw outOfRange("must not be empty") }
            return value
        case .integer(let range):
            guard let number = value.int64Value else { throw wrongType("an integer") }
            guard number >= range.lowerBound, number <= range.upperBound else {
                let bounds = range.upperBound >= Int(Int32.max)
                    ? "at least \(range.lowerBound)" : "between \(range.lowerBound) and \(range.upperBound)"
                throw outOfRange("must be \(bounds), not \(number)")
            }
            return .integer(number)
        case .number(let minimum):
            guard let number = value.numberValue?.doubleValue else { throw wrongType("a number") }
            guard number.isFinite, number >= minimum else {
                throw outOfRange("must be a number at least \(Self.format(minimum)), not \(number)")
            }
            return value
        case .boolean:
            guard case .bool = value else { throw wrongType("true or false") }
            return value
        case .choice(let allowed):
            let list = allowed.map { "\"\($0)\"" }.joined(separator: ", ")
            guard case .string(let text) = value else { throw wrongType("one of \(list)") }
            guard allowed.contains(text) else { throw outOfRange("must be one of \(list), not \"\(text)\"") }
            return value
        }
    }

    /// The value as it is written in `Config/chatfeed.json`.
    func jsonText(of configuration: ChatfeedConfiguration) -> String {
        let value = read(configuration)
        if case .number = kind, case .number(let number) = value { return Self.format(number.doubleValue) }
        return String(decoding: value.serialized(), as: UTF8.self)
    }

    /// The type, for the README.
    public var typeName: String {
        switch kind {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .choice(let allowed): allowed.map { "`\($0)`" }.joined(separator: " \\| ")
        }
    }

    /// The allowed values, for the README.
    public var rangeText: String {
        switch kind {
        case .string: "not empty"
        case .integer(let range):
            range.upperBound >= Int(Int32.max) ? "≥ \(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)"
        case .number(let minimum): "≥ \(Self.format(minimum))"
        case .boolean, .choice: ""
        }
    }

    /// The default, for the README.
    var markdownDefault: String {
        switch defaultValue {
        case .string(let text): "`\(text)`"
        case .bool(let flag): "`\(flag)`"
        default: jsonText(of: .defaults)
        }
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
