#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSONCodec

extension ChatfeedConfiguration {
    /// The environment variable naming a configuration file.
    public static let environmentVariable = "CHATFEED_CONFIG"
    /// The file read, relative to the current directory, when none is named.
    public static let defaultFile = "Config/chatfeed.json"

    /// Loads the configuration: `file` when given (it must exist), else `$CHATFEED_CONFIG` when
    /// set (it must exist), else `Config/chatfeed.json` when it exists, else the built-in
    /// defaults. A file overrides only the keys it has.
    public static func load(file: String?) throws(ConfigError) -> ChatfeedConfiguration {
        try load(file: file, environment: ProcessInfo.processInfo.environment)
    }

    /// `load(file:)` with an explicit environment and fallback file, for tests and embedding.
    public static func load(
        file: String?, environment: [String: String], fallback: String = defaultFile
    ) throws(ConfigError) -> ChatfeedConfiguration {
        guard let path = resolveFile(file, environment: environment, fallback: fallback) else { return .defaults }
        return try read(file: path)
    }

    /// The file `load` reads, or nil for the built-in defaults.
    public static func resolveFile(
        _ file: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        fallback: String = defaultFile
    ) -> String? {
        if let file { return file }
        if let named = environment[environmentVariable], !named.isEmpty { return named }
        return FileManager.default.fileExists(atPath: fallback) ? fallback : nil
    }

    /// Reads one configuration file over the defaults.
    public static func read(file path: String) throws(ConfigError) -> ChatfeedConfiguration {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigError(.fileNotFound, source: path, message: "the file does not exist")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(.unreadable, source: path, message: "the file cannot be read")
        }
        return try parse(Array(data), source: path)
    }

    /// Parses configuration JSON over `base`; `source` names the file in errors.
    public static func parse(
        _ bytes: [UInt8], source: String, over base: ChatfeedConfiguration = .defaults
    ) throws(ConfigError) -> ChatfeedConfiguration {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: bytes, maxDepth: 64)
        } catch {
            let (line, column) = error.lineAndColumn(in: bytes)
            switch error.reason {
            case .duplicateKey(let key):
                throw ConfigError(.duplicateKey, source: source, key: key, message: "the key appears more than once")
            case .invalidUTF8:
                throw ConfigError(.malformedJSON(line: line, column: column), source: source, message: "the file is not valid UTF-8")
            default:
                throw ConfigError(.malformedJSON(line: line, column: column), source: source, message: "invalid JSON: \(error.message)")
            }
        }
        guard let members = json.objectValue else {
            throw ConfigError(.notAnObject, source: source, message: "the file must hold a JSON object, not \(json.typeDescription)")
        }
        var configuration = base
        for (key, value) in members {
            try configuration.set(key, to: value, source: source)
        }
        return configuration
    }

    /// Sets `key` from text given on a command line (`--poll-interval-milliseconds 50`…): numbers
    /// are parsed, enums checked. `source` names the origin in errors (e.g. the flag).
    public mutating func set(_ key: String, text: String, source: String = "command line") throws(ConfigError) {
        let value: JSONValue
        switch Self.key(key)?.kind {
        case .string?, .choice?:
            value = .string(text)
        case .boolean?:
            value = Bool(text).map(JSONValue.bool) ?? .string(text)
        default:
            if let integer = Int64(text) {
                value = .integer(integer)
            } else if let double = Double(text), let number = JSONValue.double(double),
                      text.allSatisfy({ "0123456789.eE+-".contains($0) }) {
                value = number
            } else {
                value = .string(text)
            }
        }
        try set(key, to: value, source: source)
    }

    /// Checks every value against its allowed range (after flags set properties directly).
    public func validate(source: String = "command line") throws(ConfigError) {
        for key in Self.table {
            _ = try key.checked(key.value(in: self), source: source)
        }
    }

    private mutating func set(_ key: String, to value: JSONValue, source: String) throws(ConfigError) {
        guard let entry = Self.key(key) else {
            let suggestion = Self.keys.first { $0.lowercased() == key.lowercased() }
                .map { "; did you mean '\($0)'?" } ?? "; the keys are " + Self.keys.joined(separator: ", ")
            throw ConfigError(.unknownKey, source: source, key: key, message: "unknown key" + suggestion)
        }
        try entry.set(value, in: &self, source: source)
    }
}
